#include "shim.h"
int ls_placeholder(void){return 0;}
