"""Worker threads: the live decode (one thread owns the model) and its GUI-thread controller."""
