"""Render-time set-up for the pip cases: tiny pure-Python wheels written by hand
(no build tools, no network) into SANDBOX/wheels, and a virtualenv SANDBOX/venv."""

import base64
import hashlib
import os
import subprocess
import sys
import zipfile

sandbox = sys.argv[1]
wheels = os.path.join(sandbox, "wheels")
os.makedirs(wheels, exist_ok=True)
for name, version in (("brinytoy", "1.0"), ("brinytoy", "2.0"), ("brinyother", "1.0")):
    path = os.path.join(wheels, f"{name}-{version}-py3-none-any.whl")
    if os.path.exists(path):
        continue
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: briny-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for rel, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(path, "w") as zf:
        for rel, text in files.items():
            zf.writestr(zipfile.ZipInfo(rel, (2024, 1, 1, 0, 0, 0)), text)
venv = os.path.join(sandbox, "venv")
if not os.path.isdir(venv):
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
