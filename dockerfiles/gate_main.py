# cannenv gate: the entrypoint of a cannenv image, run as
#     /opt/cannenv/gate/python -I -S /opt/cannenv/gate/cannenv-gate -- CMD...
# by the OS's own Python with no site-packages and no PYTHON* variables: it imports only the
# sources beside it (site/: cannenv's and packaging's pure-Python sources), never the
# workload's venv, so no `pip install` there can stop a container from starting.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "site"))

from cannenv.gate import main

sys.exit(main(sys.argv[1:]))
