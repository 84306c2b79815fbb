package offline_test

import (
	"context"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/packet"
)

// BenchmarkPacket builds an executor's packet from the journals alone
// (what a hook or `memsync packet` answers when the graph is unreachable)
// over 100,000 memories, a new reader each time, as each request gets.
func BenchmarkPacket(b *testing.B) { benchPacket(b, offline.NewJournals) }

// BenchmarkPacketPlain is BenchmarkPacket through the zero Journals, which
// reads the journals for every list and scans them for every Get, as
// packets did before NewJournals.
func BenchmarkPacketPlain(b *testing.B) {
	benchPacket(b, func(l memsync.Layout) offline.Journals { return offline.Journals{Layout: l} })
}

func benchPacket(b *testing.B, reader func(memsync.Layout) offline.Journals) {
	layout := offline.BenchRepo(b)
	req := packet.Request{Role: packet.Executor, Agent: "alice", Goal: "database migration rollback",
		Task: "task-1", AsOf: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := packet.BuildPacket(context.Background(), reader(layout), req); err != nil {
			b.Fatal(err)
		}
	}
}
