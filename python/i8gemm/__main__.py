"""python -m i8gemm tune|bench|inspect|cache ... : the CLI shipped in the wheel, run as is."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def cli_path():
    """$I8GEMM_CLI, the wheel's copy, the CLI beside $I8GEMM_LIBRARY's build tree
    (build/runtime/ -> build/tools/), or build/tools/ beside python/."""
    env = os.environ.get("I8GEMM_CLI")
    if env:
        if not os.access(env, os.X_OK):
            sys.exit(f"i8gemm: I8GEMM_CLI={env} is not an executable file")
        return env
    candidates = [os.path.join(_HERE, "_bin", "i8gemm")]
    lib = os.environ.get("I8GEMM_LIBRARY")
    if lib:
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(lib)), "..", "tools", "i8gemm"))
    candidates.append(os.path.join(_HERE, "..", "..", "build", "tools", "i8gemm"))
    for c in candidates:
        if os.access(c, os.X_OK):
            return os.path.normpath(c)
    sys.exit("i8gemm: the CLI was not found (tried " + ", ".join(candidates) + "); set I8GEMM_CLI")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path = cli_path()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path] + list(argv))


if __name__ == "__main__":
    main()
