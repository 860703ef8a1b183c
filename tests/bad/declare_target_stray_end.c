// EXPECT: 4: 'end declare target' without a 'declare target' before it
/* end declare target with no block open. */
int g;
#pragma omp end declare target
