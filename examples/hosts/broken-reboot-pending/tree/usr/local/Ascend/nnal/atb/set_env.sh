# FIXTURE: stands for NNAL's set_env.sh
