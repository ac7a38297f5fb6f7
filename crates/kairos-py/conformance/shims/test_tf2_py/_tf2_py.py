from tf2_py import *  # noqa: F401,F403
