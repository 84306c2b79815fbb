package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// tempPrefix started the name of a file being written before
// journal.WriteAtomic; such a file left by a crash is removed by a later
// Generate once it is staleTemp old. Files being written now end in
// journal.TempSuffix and are removed once their writer is gone.
const (
	tempPrefix = ".memsync-tmp-"
	staleTemp  = 10 * time.Minute
)

// Writer regenerates agents' snapshots from a graph into their cache
// directories. It is safe for concurrent use; two processes writing the
// same snapshot each replace whole files, so a reader never sees a torn
// one.
//
// Between calls it remembers, for each file it wrote or found up to date,
// the file's identity (device and inode, size, modification time) and a
// hash of its bytes: a file rendered again to the same bytes and still
// the file it left is not read back to compare (a daemon's walk after one
// shared record leaves most entity pages of every agent as they were),
// and one rendered to other bytes is replaced without being read (every
// agent's FACTS after that record). A file changed since, by anyone, is
// read and compared first. Trusting the identity can only cost a write
// that was not needed, never skip one that was: a file is left alone only
// when its hash says it holds the rendered bytes.
type Writer struct {
	g      memsync.Graph
	layout memsync.Layout
	lg     *zap.Logger
	// Limit caps every list of a snapshot; DefaultLimit when <= 0.
	Limit int

	seed  maphash.Seed
	mu    sync.Mutex
	files map[uint64]knownFile // by maphash of the path
	// reads counts files read back to compare with their rendering, and
	// onWalk sees each walk's rendering counts: hooks for tests.
	reads  atomic.Int64
	onWalk func(renderStats)
}

// knownFile is a snapshot file as the Writer last wrote or read it: its
// identity, size and modification time, and a hash of its bytes. It is
// small (a daemon of 2,000 agents knows some 150,000 files: with each
// file's os.FileInfo and path this memory took about 60 MB of its heap)
// and keyed by a hash of the path, which is safe: an entry is trusted
// only when the file now at the path has its device and inode.
type knownFile struct {
	dev, ino    uint64
	size, mtime int64 // mtime in Unix nanoseconds
	sum         uint64
}

// identify is the knownFile of info without the hash of its bytes;
// false for anything but a regular file on a system that gives inodes.
func identify(info os.FileInfo) (knownFile, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || !info.Mode().IsRegular() {
		return knownFile{}, false
	}
	return knownFile{dev: uint64(st.Dev), ino: uint64(st.Ino), size: info.Size(), mtime: info.ModTime().UnixNano()}, true
}

// key is the files map's key for path.
func (w *Writer) key(path string) uint64 { return maphash.String(w.seed, path) }

// NewWriter writes snapshots of g under layout. lg may be nil.
func NewWriter(g memsync.Graph, layout memsync.Layout, lg *zap.Logger) *Writer {
	if lg == nil {
		lg = zap.NewNop()
	}
	return &Writer{g: g, layout: layout, lg: lg, seed: maphash.MakeSeed(), files: map[uint64]knownFile{}}
}

// known says what the Writer knows of the file at path against data:
// same when it is the file this Writer last wrote or compared there,
// unchanged since, and held bytes of data's hash; differs when it is that
// file, unchanged since, and cannot hold data (another size or hash), so
// it need not be read back to compare. Neither when the Writer does not
// know the file as it is now (someone else changed it, or it never saw it).
func (w *Writer) known(path string, data []byte) (same, differs bool) {
	w.mu.Lock()
	k, ok := w.files[w.key(path)]
	w.mu.Unlock()
	if !ok {
		return false, false
	}
	info, err := os.Stat(path)
	if err != nil {
		return false, false
	}
	if now, ok := identify(info); !ok || now.dev != k.dev || now.ino != k.ino || now.size != k.size || now.mtime != k.mtime {
		return false, false
	}
	if info.Size() != int64(len(data)) || maphash.Bytes(w.seed, data) != k.sum {
		return false, true
	}
	return true, false
}

// remember notes that the file at path holds data now.
func (w *Writer) remember(path string, data []byte) {
	info, err := os.Stat(path)
	w.mu.Lock()
	defer w.mu.Unlock()
	var k knownFile
	ok := false
	if err == nil {
		k, ok = identify(info)
	}
	if !ok || k.size != int64(len(data)) {
		delete(w.files, w.key(path))
		return
	}
	k.sum = maphash.Bytes(w.seed, data)
	w.files[w.key(path)] = k
}

// forget drops what the Writer knew of the file at path.
func (w *Writer) forget(path string) {
	w.mu.Lock()
	delete(w.files, w.key(path))
	w.mu.Unlock()
}

// Result says what Generate did to one agent's cache. Paths are relative to
// the repository root, slash-separated, sorted.
type Result struct {
	Agent     string
	Written   []string // files created or replaced
	Unchanged int      // files already holding the rendered bytes
	Removed   []string // entity pages no longer mentioned, and stale temp files
}

// Generate renders the snapshots of agents (every agent of the repository
// when agents is empty) from one walk of the graph per walkAgents of them
// and writes them: each
// file that changed is replaced atomically (temp file, rename) without
// fsync: snapshots are derived data, so a crash leaves an older snapshot
// (never a torn one), which the next walk rewrites (journal.ReplaceDerived), files already up to date are left alone, and entity
// pages that are no longer rendered are removed. On error, the files
// already written are complete and the rest are as they were.
//
// Files are rendered and written one at a time, so the memory Generate
// needs beyond the walk's capped lists (those of walkAgents agents at
// most) is one file's, however many agents and pages there are.
func (w *Writer) Generate(ctx context.Context, agents []string) ([]Result, error) {
	if len(agents) == 0 {
		var err error
		if agents, err = w.layout.Agents(); err != nil {
			return nil, fmt.Errorf("cache: list agents: %w", err)
		}
		if len(agents) == 0 {
			return nil, nil
		}
	}
	var out []Result
	for len(agents) > 0 {
		chunk := agents[:min(walkAgents, len(agents))]
		agents = agents[len(chunk):]
		res, err := w.generate(ctx, chunk)
		out = append(out, res...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// walkAgents bounds the agents one walk gathers lists for. A walk keeps,
// for each agent's private group, capped lists (sections, core, aging,
// entity pages) that together hold most of a busy agent's current
// memories: walking 1,000 agents at once held about 300k entries (issue
// 50: the daemon's peak after a catch-up of 300k records over 1,000
// agents, 400-500 MB of live heap). Each further walk of a fleet costs
// one more scan of the graph; the regenerator paces walks by their
// length, so the share of a core it takes stays the same.
const walkAgents = 200

// generate is Generate of agents from one walk.
func (w *Writer) generate(ctx context.Context, agents []string) ([]Result, error) {
	wk, err := walk(ctx, w.g, agents, w.Limit)
	if err != nil {
		return nil, err
	}
	if w.onWalk != nil {
		defer func() { w.onWalk(wk.stats) }()
	}
	out := make([]Result, 0, len(wk.agents))
	var buf bytes.Buffer
	var scratch []byte
	for _, a := range wk.agents {
		res, err := w.write(a, func(emit func(rel string, data []byte) error) error {
			return wk.render(a, &buf, emit)
		}, &scratch)
		if err != nil {
			w.lg.Error("cache: write snapshot", zap.String("agent", a), zap.Error(err))
			return out, err
		}
		if len(res.Written) > 0 || len(res.Removed) > 0 {
			w.lg.Info("cache: snapshot updated", zap.String("agent", a),
				zap.Int("written", len(res.Written)), zap.Int("removed", len(res.Removed)), zap.Int("unchanged", res.Unchanged))
		}
		out = append(out, res)
	}
	return out, nil
}

// write puts agent's snapshot in place as render hands over its files,
// then removes the entity pages it did not render. scratch is reused to
// read the files it compares with.
func (w *Writer) write(agent string, render func(emit func(rel string, data []byte) error) error, scratch *[]byte) (Result, error) {
	res := Result{Agent: agent}
	root := w.layout.CacheDir(agent)
	if err := journal.RealDir(w.layout.Root, filepath.Join(root, EntitiesDir)); err != nil {
		// Never written through a symbolic link: it may lead out of the
		// repository.
		w.lg.Warn("cache: snapshot not written", zap.String("agent", agent), zap.Error(err))
		return res, nil
	}
	rendered := map[string]bool{}
	err := render(func(rel string, data []byte) error {
		rendered[rel] = true
		path := filepath.Join(root, filepath.FromSlash(rel))
		same, differs := w.known(path, data)
		if same {
			res.Unchanged++
			return nil
		}
		if !differs {
			w.reads.Add(1)
			if holds(path, data, scratch) {
				w.remember(path, data)
				res.Unchanged++
				return nil
			}
		}
		if err := journal.ReplaceDerived(path, data); err != nil {
			w.forget(path)
			return fmt.Errorf("cache: write %s: %w", w.layout.Rel(path), diskFull(err))
		}
		w.remember(path, data)
		res.Written = append(res.Written, w.layout.Rel(path))
		return nil
	})
	if err != nil {
		return res, err
	}
	// Stale entity pages and abandoned temp files.
	for _, dir := range []string{root, filepath.Join(root, EntitiesDir)} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("cache: read %s: %w", w.layout.Rel(dir), err)
		}
		for _, e := range entries {
			name := e.Name()
			path := filepath.Join(dir, name)
			rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
			stale := false
			switch {
			case strings.HasSuffix(name, journal.TempSuffix):
				info, err := e.Info()
				stale = err == nil && journal.StaleTemp(name, info.ModTime(), time.Now())
			case strings.HasPrefix(name, tempPrefix):
				info, err := e.Info()
				stale = err == nil && time.Since(info.ModTime()) > staleTemp
			case dir != root && e.Type().IsRegular() && strings.HasSuffix(name, ".md"):
				stale = !rendered[rel]
			}
			if !stale {
				continue
			}
			w.forget(path)
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return res, fmt.Errorf("cache: remove %s: %w", w.layout.Rel(path), err)
			}
			res.Removed = append(res.Removed, w.layout.Rel(path))
		}
	}
	sort.Strings(res.Written)
	sort.Strings(res.Removed)
	return res, nil
}

// holds reports whether the file at path holds exactly data, reading it
// into scratch (grown as needed) rather than a buffer of its own.
func holds(path string, data []byte, scratch *[]byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() != int64(len(data)) {
		return false
	}
	// One byte more than expected tells a file that grew since the Stat.
	if cap(*scratch) < len(data)+1 {
		*scratch = make([]byte, len(data)+1)
	}
	buf := (*scratch)[:len(data)+1]
	n, _ := io.ReadFull(f, buf)
	return n == len(data) && bytes.Equal(buf[:n], data)
}

// diskFull names a full disk in err's message.
func diskFull(err error) error {
	if memsync.IsDiskFull(err) {
		return fmt.Errorf("disk full: %w", err)
	}
	return err
}
