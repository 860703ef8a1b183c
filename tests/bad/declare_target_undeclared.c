// EXPECT: 3: 'later' is not declared before this directive
/* declare target names what is declared after it. */
#pragma omp declare target link(later)
int later;
