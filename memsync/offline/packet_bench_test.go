package offline_test

import (
	"context"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/packet"
)

// BenchmarkPacket builds an executor's packet from the journals alone
// (what a hook or `memsync packet` answers when the graph is unreachable)
// over 100,000 memories, a new reader each time, as each request gets.
// BenchmarkPacketPlain reads the journals on every call, as before
// NewJournals.
func BenchmarkPacket(b *testing.B) {
	layout := offline.BenchRepo(b)
	req := packet.Request{Role: packet.Executor, Agent: "alice", Goal: "database migration rollback",
		Task: "task-1", AsOf: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := packet.BuildPacket(context.Background(), offline.NewJournals(layout), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPacketPlain(b *testing.B) {
	layout := offline.BenchRepo(b)
	req := packet.Request{Role: packet.Executor, Agent: "alice", Goal: "database migration rollback",
		Task: "task-1", AsOf: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := packet.BuildPacket(context.Background(), offline.Journals{Layout: layout}, req); err != nil {
			b.Fatal(err)
		}
	}
}
