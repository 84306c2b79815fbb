package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mem0Export writes a Mem0 JSON-array export of n memories, pretty
// printed (several lines a memory), and returns its path.
func mem0Export(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  {\n    \"id\": \"m-%d\",\n    \"memory\": \"memory number %d about the okapi\",\n    \"created_at\": \"2026-01-10T10:00:00Z\"\n  }", i, i)
	}
	b.WriteString("\n]\n")
	path := filepath.Join(t.TempDir(), "memories.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cpuTime is the CPU time the process has used: unlike the wall clock,
// other processes on a busy machine do not move it.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestMem0ArrayParseIsLinear is issue 51 §10: parsing a Mem0 JSON-array
// export takes CPU time linear in its size (3× the memories must not take
// anything like 9× the time), and line numbers stay right.
func TestMem0ArrayParseIsLinear(t *testing.T) {
	parse := func(n int) (time.Duration, *Source) {
		path := mem0Export(t, n)
		best := time.Duration(1 << 62)
		var out *Source
		for range 3 {
			out = &Source{}
			runtime.GC()
			start := cpuTime(t)
			if err := parseMem0(path, out); err != nil {
				t.Fatal(err)
			}
			best = min(best, cpuTime(t)-start)
		}
		return best, out
	}
	small, src := parse(10000)
	if len(src.Items) != 10000 || src.Items[1].Line != 7 || src.Items[9999].Line != 2+5*9999 {
		t.Fatalf("%d items, lines %d and %d", len(src.Items), src.Items[1].Line, src.Items[len(src.Items)-1].Line)
	}
	big, _ := parse(30000)
	ratio := float64(big) / float64(small)
	t.Logf("3× the memories: %.1f× the CPU time (%v vs %v)", ratio, big, small)
	if ratio > 5 {
		t.Fatalf("3× the memories took %.1f× the time (%v vs %v): not linear", ratio, big, small)
	}
}
