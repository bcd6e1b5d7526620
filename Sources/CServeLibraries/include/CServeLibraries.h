// Nothing to import: this target only defines libmicrohttpd's and libsystemd's functions
// for the credfile executable, binding each at its first call (bindings.c, bind.h).
