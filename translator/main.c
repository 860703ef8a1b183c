/* main.c: the macc command. */
#include "macc.h"

int main(int argc, char **argv)
{
    return driver_main(argc, argv);
}
