# FIXTURE: stands for the toolkit's set_env.sh
