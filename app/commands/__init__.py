"""One module per `callscope` sub-command; each defines ``register(subparsers)``."""
