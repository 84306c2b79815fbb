package main

import (
	"reflect"
	"testing"
)

func TestStackKeys(t *testing.T) {
	dump := `goroutine 1 [IO wait, 2 minutes]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/local/go/src/runtime/netpoll.go:351 +0x85
github.com/neo4j/neo4j-go-driver/v5/neo4j/internal/bolt.(*bolt5).run(0xc000)
	/root/go/pkg/mod/github.com/neo4j/bolt5.go:10 +0x1
github.com/memsync/memsync/graph/neo4j.writeChunk({0x1, 0x2}, {0x3})
	/work/main/graph/neo4j/apply.go:338 +0x2a
github.com/memsync/memsync/graph/neo4j.(*Graph).applyChunk(0xc0)
	/work/main/graph/neo4j/apply.go:250 +0x2a

goroutine 7 [running]:
main.(*wallProfiler).loop(0xc0)
	/work/main/cmd/bench/wallprof.go:50 +0x1

goroutine 9 [select]:
github.com/memsync/memsync/cmd/bench.helper()
	/work/main/cmd/bench/x.go:1 +0x1
github.com/memsync/memsync/graph/embedded.(*preparer).work(0xc0)
	/work/main/graph/embedded/prepare.go:60 +0x1
`
	got := stackKeys([]byte(dump))
	want := []string{
		"[IO wait] graph/neo4j.writeChunk (apply.go:338) ← graph/neo4j.(*Graph).applyChunk (apply.go:250)",
		"[select] graph/embedded.(*preparer).work (prepare.go:60)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stackKeys:\n%q\nwant\n%q", got, want)
	}
}
