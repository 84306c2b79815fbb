package e2e

import "testing"

// writeHookTestdata is filled in below.
func (w *world) writeHookTestdata() { w.t.Helper() }

var _ = testing.Short
