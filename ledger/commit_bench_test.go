package ledger

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCommit measures one auto-commit of one appended line into a
// repository holding one journal: hash, lock the index, write tree, commit,
// index and ref (the path every lock of lockowner.go is on).
func BenchmarkCommit(b *testing.B) {
	dir := newRepo(b)
	c := committer(b, dir)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		appendLine(b, dir, "a", "bench", day.Add(time.Duration(i)*time.Second))
		b.StartTimer()
		res, err := c.CommitNow(ctx, "")
		if err != nil || res.Commit == "" {
			b.Fatalf("CommitNow = %+v, %v", res, err)
		}
	}
}
