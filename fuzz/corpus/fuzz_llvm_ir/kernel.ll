; A small amdgpu kernel with every fact the reader counts: an LDS global, an MFMA, a private
; alloca, a call that was not inlined, and one to a declaration.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7"
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [64 x i32] undef, align 16

declare <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32, i32, <4 x i32>, i32 immarg, i32 immarg, i32 immarg)
declare i64 @__ockl_get_local_id(i32)

define internal i32 @helper(i32 %x) noinline {
  %y = add i32 %x, 1
  ret i32 %y
}

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %i) {
  %buf = alloca [16 x i32], align 4, addrspace(5)
  %p = getelementptr [16 x i32], ptr addrspace(5) %buf, i32 0, i32 %i
  store i32 %i, ptr addrspace(5) %p
  %l = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %i
  store i32 %i, ptr addrspace(3) %l
  %tid = call i64 @__ockl_get_local_id(i32 0)
  %h = call i32 @helper(i32 %i)
  %acc = call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32 %h, i32 %i, <4 x i32> zeroinitializer, i32 0, i32 0, i32 0)
  %e = extractelement <4 x i32> %acc, i32 0
  store i32 %e, ptr addrspace(1) %out
  ret void
}
