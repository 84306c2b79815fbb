package memsync

// LocateLine is locateLine, for the fuzz target.
var LocateLine = locateLine
