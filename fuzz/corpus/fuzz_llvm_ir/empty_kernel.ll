define amdgpu_kernel void @k() {
  ret void
}
