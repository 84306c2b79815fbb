package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	gitobject "github.com/go-git/go-git/v5/plumbing/object"

	"github.com/memsync/memsync/ledger"
)

// gitignoreLines keep what is host-local or generated out of git (SPEC
// §2): .memsync/ (the embedded graph, the locks, the host id), every sync/
// directory (cursors, outbox, rejects) and every cache/ directory (the
// snapshots memsync cache regenerates from the graph).
var gitignoreLines = []string{".memsync/", "agents/*/memory/sync/", "agents/*/memory/cache/"}

// placeholder keeps an agent's otherwise empty directory in git, so that a
// clone has the whole layout. No reader of the journals or entities looks
// at it (they read *.jsonl and *.md), and the daemon's commits leave it be.
const placeholder = ".gitkeep"

func runInit(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "init", "init [--repo DIR] [--agent NAME]...", `
Create a memory repository, or complete one: for each --agent the layout
agents/NAME/memory/{MEMORY.md, entities/, journal/, journal/archive/, cache/,
sync/}; a commented memsync.yaml listing every option at its default; a
.gitignore that keeps what is host-local or generated out of git (.memsync/,
every sync/ and cache/ directory); a .gitattributes line "*.jsonl
merge=union" (journals merge as a union of lines); and a git repository
when DIR is not inside one already. Existing files are never overwritten
(missing .gitignore and .gitattributes lines are appended), so running init
again changes nothing. Prints each path it creates, then commits the files
it created or changed (and only those) in one commit as memsync; when a
person has other changes staged, it commits nothing and says so.`)
	repoFlag := addRepoFlag(fs)
	var agents stringList
	fs.Var(&agents, "agent", "create the memory layout of agent `NAME` (repeatable)")
	positional, code, done := fs.parse(args)
	if done {
		return code
	}
	if len(positional) > 0 {
		return fs.usageErr("unexpected argument %q (agents are named with --agent)", positional[0])
	}
	for _, a := range agents {
		if !validAgent(a) {
			return fs.usageErr("--agent: %s", agentNameError(a))
		}
	}
	repo, err := repoDir(env, *repoFlag)
	if err != nil {
		return fs.fail("%v", err)
	}
	in := &initializer{repo: repo, env: env}
	if err := in.run(agents); err != nil {
		return fs.fail("%v", err)
	}
	if err := in.commit(agents); err != nil {
		return fs.fail("commit: %v", err)
	}
	return exitOK
}

// initializer creates what is missing of a repository and reports it.
type initializer struct {
	repo string
	env  *Env
	// changed is every file created or changed, to commit.
	changed []string
}

// created reports a new file, or a new directory (with a trailing slash).
func (in *initializer) created(path string, dir bool) {
	rel := relPath(in.repo, path)
	if dir {
		rel += "/"
	} else {
		in.changed = append(in.changed, path)
	}
	fmt.Fprintf(in.env.Stdout, "created %s\n", rel)
}

func (in *initializer) run(agents []string) error {
	if err := in.mkdir(in.repo); err != nil {
		return err
	}
	if err := in.initGit(); err != nil {
		return err
	}
	if err := in.writeNew(configFile(in.repo), []byte(defaultConfigYAML)); err != nil {
		return err
	}
	if err := in.gitignore(); err != nil {
		return err
	}
	if err := in.gitattributes(); err != nil {
		return err
	}
	if err := in.mkdir(layout(in.repo).AgentsDir()); err != nil {
		return err
	}
	for _, a := range agents {
		for _, dir := range []string{memoryDir(in.repo, a), entitiesDir(in.repo, a), journalDir(in.repo, a),
			archiveDir(in.repo, a), cacheDir(in.repo, a), syncDir(in.repo, a)} {
			if err := in.mkdir(dir); err != nil {
				return err
			}
		}
		if err := in.writeNew(memoryFile(in.repo, a), []byte(memoryTemplate(a))); err != nil {
			return err
		}
		for _, dir := range []string{entitiesDir(in.repo, a), journalDir(in.repo, a), archiveDir(in.repo, a)} {
			if err := in.writeNew(filepath.Join(dir, placeholder), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (in *initializer) mkdir(dir string) error {
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if dir != in.repo {
		in.created(dir, true)
	}
	return nil
}

// writeNew creates path with data unless it exists.
func (in *initializer) writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	in.created(path, false)
	return nil
}

// gitignore appends the lines of gitignoreLines that .gitignore lacks.
func (in *initializer) gitignore() error {
	return in.ensureLines(".gitignore", "# host-local memsync state, never committed\n", gitignoreLines)
}

// gitattributes makes journals merge as a union of lines, in memsync's
// exchange (SPEC §12) and in people's own git alike.
func (in *initializer) gitattributes() error {
	return in.ensureLines(".gitattributes", "# journals are append-only: a merge keeps both sides' lines\n",
		[]string{strings.TrimSpace(ledger.JournalAttributes)})
}

// ensureLines appends to the repository's file name the lines it lacks,
// after header when the file is new or empty.
func (in *initializer) ensureLines(name, header string, lines []string) error {
	path := filepath.Join(in.repo, name)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	if len(data) == 0 {
		add.WriteString(header)
	}
	missing := 0
	for _, l := range lines {
		// "/.memsync/" means the same to git as ".memsync/" at the root.
		if !have[l] && !have["/"+l] {
			add.WriteString(l + "\n")
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	prefix := ""
	if len(data) > 0 && data[len(data)-1] != '\n' {
		prefix = "\n"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(prefix + add.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if len(data) == 0 {
		in.created(path, false)
	} else {
		in.changed = append(in.changed, path)
		fmt.Fprintf(in.env.Stdout, "updated %s\n", relPath(in.repo, path))
	}
	return nil
}

// initGit makes the repository a git work tree unless it is inside one.
func (in *initializer) initGit() error {
	_, err := git.PlainOpenWithOptions(in.repo, &git.PlainOpenOptions{DetectDotGit: true})
	if err == nil {
		return nil
	}
	if !errors.Is(err, git.ErrRepositoryNotExists) {
		return fmt.Errorf("open git repository %s: %w", in.repo, err)
	}
	if _, err := git.PlainInit(in.repo, false); err != nil {
		return fmt.Errorf("git init %s: %w", in.repo, err)
	}
	in.created(filepath.Join(in.repo, ".git"), true)
	return nil
}

func memoryTemplate(agent string) string {
	return "# " + agent + ` — memory

Curated, human-readable memory of ` + agent + `: what matters, in your own words.
The journal (journal/*.jsonl) is the complete record; this page is the short
version worth reading first. memsync compaction maintains a generated section
of this file and leaves the rest as you wrote it.
`
}

// commit records the files init created or changed (in.changed), and only
// those, in one commit as memsync, so that the repository starts clean and
// a later init (another agent) commits only what it added. It commits
// nothing, saying why on stdout, when HEAD is not on a branch or when
// other changes are staged (a commit takes the whole index, and a
// person's staged work is theirs to commit).
func (in *initializer) commit(agents []string) error {
	if len(in.changed) == 0 {
		return nil
	}
	r, err := git.PlainOpenWithOptions(in.repo, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return fmt.Errorf("open git repository %s: %w", in.repo, err)
	}
	head, err := r.Head()
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound): // no commit yet
	case err != nil:
		return fmt.Errorf("read HEAD: %w", err)
	case !head.Name().IsBranch():
		fmt.Fprintln(in.env.Stdout, "not committed: HEAD is not on a branch; commit the files above yourself")
		return nil
	}
	wt, err := r.Worktree()
	if err != nil {
		return fmt.Errorf("work tree: %w", err)
	}
	root := wt.Filesystem.Root()
	ours := map[string]bool{}
	var rels []string
	for _, p := range in.changed {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !ours[rel] {
			ours[rel] = true
			rels = append(rels, rel)
		}
	}
	st, err := wt.Status()
	if err != nil {
		return fmt.Errorf("git status: %w", err)
	}
	var staged []string
	for path, fs := range st {
		if !ours[path] && fs.Staging != git.Unmodified && fs.Staging != git.Untracked {
			staged = append(staged, path)
		}
	}
	if len(staged) > 0 {
		slices.Sort(staged)
		fmt.Fprintf(in.env.Stdout, "not committed: other changes are staged in git (%s); commit the files above yourself\n",
			strings.Join(staged, ", "))
		return nil
	}
	for _, rel := range rels {
		if err := wt.AddWithOptions(&git.AddOptions{Path: rel, SkipStatus: true}); err != nil {
			return fmt.Errorf("git add %s: %w", rel, err)
		}
	}
	title := "memsync init"
	if len(agents) > 0 {
		title += ": agents " + strings.Join(agents, ", ")
	}
	msg := title + "\n\nFiles memsync init created or changed:\n"
	for _, rel := range rels {
		msg += "  " + rel + "\n"
	}
	now := in.env.Now()
	sig := &gitobject.Signature{Name: ledger.AuthorName, Email: ledger.AuthorEmail, When: now}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if errors.Is(err, git.ErrEmptyCommit) {
		return nil // the tree already held them as they are
	}
	if err != nil {
		return fmt.Errorf("git commit: %w", err)
	}
	fmt.Fprintf(in.env.Stdout, "committed %s %s\n", h.String()[:12], title)
	return nil
}
