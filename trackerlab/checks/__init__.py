"""Checking gradients: ``check_grads`` (reverse mode against central differences) and ``check_tape`` (every
recorded rule of a tape at the inputs it saw), both on one finite-difference core (``differences``)."""
