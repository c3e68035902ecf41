"""SASS instruction count of every kernel of the built torch extension whose name contains a pattern.

    python docs/ops/diagnostics/sass_counts.py [PATTERN ...]   (default: fwd_nd fwd_bcast)

Needs cuobjdump (CUDA toolkit) and a built extension under the opbench cache (`opbench ops build`).
"""

import glob
import os
import re
import shutil
import subprocess
import sys

from ops.build import cache_root

pats = sys.argv[1:] or ["fwd_nd", "fwd_bcast"]
if shutil.which("cuobjdump") is None:
    sys.exit("cuobjdump not found: it comes with the CUDA toolkit (run this on the GPU host)")
libs = sorted(glob.glob(os.path.join(str(cache_root()), "torch-*", "*.so")), key=os.path.getmtime)
if not libs:
    sys.exit(f"no built torch extension under {cache_root()}: run `opbench ops build` first")
sass = subprocess.run(["cuobjdump", "-sass", libs[-1]], capture_output=True, text=True, check=True).stdout
counts: dict[str, int] = {}
name = None
for line in sass.splitlines():
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1)
        counts[name] = 0
    elif name and re.match(r"\s+/\*[0-9a-f]{4}\*/", line):
        counts[name] += 1
for name, n in sorted(counts.items()):
    if any(p in name for p in pats):
        print(n, re.sub(r"^_ZN9lerp_core3gpu\d+", "", name))
