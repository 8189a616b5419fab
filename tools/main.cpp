// i8gemm: one CLI with subcommands (tune, inspect, bench).
int main() { return 0; }
