# gunicorn reads this file from the directory it starts in (the container's, compose's and bench/load.py's alike).
# Its access log names each request's route, never the path sent: a path may be a secret (core.routes).
logger_class = "core.logging.GunicornAccessLog"
