package offline

// BenchRepo is benchRepo, for the external benchmarks (packet imports
// this package, so its benchmark over the journals lives in offline_test).
var BenchRepo = benchRepo
