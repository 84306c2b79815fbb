package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/read"
)

// openReader is the one read path of every door (read.Reader): the
// configured graph, or, when it cannot be opened or reached, or is being
// rebuilt, the journals themselves (Offline, a note on stderr naming cmd):
// reads never hard-fail. A read that fails on the graph answers from the
// journals the same way (read.Read). Close releases it.
func openReader(ctx context.Context, cfg *Config, repo, cmd string, stderr io.Writer) *read.Reader {
	journals := readJournals(cfg, repo)
	note := func(err error) {
		fmt.Fprintf(stderr, "memsync %s: graph unavailable (%v); answering offline from the journals%s\n", cmd, oneLineErr(err), offlineVectors(cfg))
	}
	// A store being rebuilt is half empty: the journals answer (README
	// "Reads during a rebuild").
	if err := embeddedRebuilding(cfg, repo); err != nil {
		fmt.Fprintf(stderr, "memsync %s: %v; answering offline from the journals%s\n", cmd, oneLineErr(err), offlineVectors(cfg))
		return read.Offline(journals, err.Error()+offlineVectors(cfg))
	}
	opened := func(g memsync.Graph) *read.Reader {
		r := read.New(g, journals, func() { g.Close() })
		r.Graph, r.Suffix, r.Note = cfg.graph(), offlineVectors(cfg), note
		r.Check = func() error { return embeddedRebuilding(cfg, repo) } // begun meanwhile: it may have dropped what it read
		return r
	}
	g, err := openReadGraph(ctx, cfg, repo, zap.NewNop())
	if err == nil && cfg.graph() == graphNeo4j {
		// Neo4j's opens have just read from the server (the schema's
		// state): that was the probe.
		return opened(g)
	}
	if err == nil {
		// A graph that opens may still be unreachable: ask it something
		// cheap first, so that the answer is all-graph or all-offline,
		// never a mix.
		if _, err = g.Get(ctx, []string{"mem_probe"}); err == nil {
			return opened(g)
		}
		g.Close()
		err = fmt.Errorf("%s graph: %w", cfg.graph(), err)
	} else {
		err = fmt.Errorf("open %s graph: %w", cfg.graph(), err)
	}
	note(err)
	return read.Offline(journals, err.Error()+offlineVectors(cfg))
}

// readJournals is the offline reader every door falls back on: the
// repository's journals, read once, embedded with the configured model.
func readJournals(cfg *Config, repo string) offline.Journals {
	j := offline.NewJournals(layout(repo))
	j.Embedder = cfg.emb
	return j
}

// offlineVectors is what the offline note says of vector recall: nothing
// without an embedder (lexical, as always), else that the journals are
// embedded for the query (hybrid, as the graph ranks).
func offlineVectors(cfg *Config) string {
	if cfg.emb == nil {
		return ""
	}
	return "; hybrid recall: the journals embedded with " + cfg.emb.Version()
}

// parseClock reads --as-of as a read's clock: empty is the present (now,
// every record seen, a future-dated one as if written now), a time is a
// cutoff (records after it left out). SPEC §7 "The clock".
func parseClock(s string, now time.Time) (memsync.Clock, error) {
	if s == "" {
		return memsync.Present(now), nil
	}
	t, err := parseAsOf(s, now)
	if err != nil {
		return memsync.Clock{}, err
	}
	return memsync.AsOf(t), nil
}

// parseAsOf reads --as-of: an RFC 3339 time; empty means now
// (cmdline.ParseAsOf).
func parseAsOf(s string, now time.Time) (time.Time, error) { return cmdline.ParseAsOf(s, now) }

// findMemory looks uuid up in the graph and, when the graph cannot be
// reached or has not projected it yet (the daemon may lag behind an
// append), in the journals.
func findMemory(ctx context.Context, cfg *Config, repo, cmd string, stderr io.Writer, uuid string) (memsync.Node, bool, error) {
	r := openReader(ctx, cfg, repo, cmd, stderr)
	defer r.Close()
	return read.Find(ctx, r, uuid)
}

// promotions is the engine's OnSignals for the daemon and sync: it
// journals the promotions due among the memories a pass touched (SPEC §7),
// counting them in *count when count is not nil. A failure is logged; the
// next pass that touches the memory tries again.
func promotions(ctx context.Context, g memsync.Graph, repo string, cfg *Config, lg *zap.Logger, env *Env, count *int) func([]string) {
	p := &memsync.Promoter{Graph: g, Layout: layout(repo), Logger: lg, Now: env.Now, NoSync: !cfg.Append.FSync}
	return func(uuids []string) {
		wrote, err := p.Check(ctx, uuids)
		if err != nil {
			lg.Warn("promotion check failed", zap.Error(err))
		}
		if count != nil {
			*count += len(wrote)
		}
	}
}
