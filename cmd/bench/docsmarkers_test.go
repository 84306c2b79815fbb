package main

import (
	"os"
	"strings"
	"testing"
)

// TestBenchmarksDocHasMarkers: --out docs/benchmarks.md rewrites only the
// section between the markers, so the file must keep each exactly once.
func TestBenchmarksDocHasMarkers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{beginMarker, endMarker} {
		if n := strings.Count(string(doc), m); n != 1 {
			t.Errorf("docs/benchmarks.md has %q %d times, want once", m, n)
		}
	}
	if b, e := strings.Index(string(doc), beginMarker), strings.Index(string(doc), endMarker); b > e {
		t.Errorf("docs/benchmarks.md: %q comes after %q", beginMarker, endMarker)
	}
}
