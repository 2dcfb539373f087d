"""Stage 4, resolve: precedence among repositories, shadowing, collections."""
