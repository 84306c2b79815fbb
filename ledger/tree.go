package ledger

import (
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// writeTree stores the tree of base (nil: empty) with changes applied and
// returns its hash. Only the subtrees on a changed path are rewritten.
func (r *repo) writeTree(base *object.Tree, changes []change) (plumbing.Hash, error) {
	h, _, err := r.rewrite(base, changes, "")
	return h, err
}

// rewrite applies changes (paths relative to the repository root, all under
// prefix) to the tree base at prefix. empty reports a tree left with no
// entries, which git does not keep.
func (r *repo) rewrite(base *object.Tree, changes []change, prefix string) (h plumbing.Hash, empty bool, err error) {
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	// Group the changes by the first path element below prefix.
	groups := map[string][]change{}
	var names []string
	for _, ch := range changes {
		name, _, _ := strings.Cut(strings.TrimPrefix(ch.path, prefix), "/")
		if _, ok := groups[name]; !ok {
			names = append(names, name)
		}
		groups[name] = append(groups[name], ch)
	}
	sort.Strings(names)
	for _, name := range names {
		group := groups[name]
		if len(group) == 1 && group[0].path == prefix+name {
			if s := group[0].snap; s != nil {
				entries[name] = object.TreeEntry{Name: name, Mode: s.mode, Hash: s.hash}
			} else {
				delete(entries, name)
			}
			continue
		}
		var sub *object.Tree
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			if sub, err = object.GetTree(r.store, e.Hash); err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
		subHash, subEmpty, err := r.rewrite(sub, group, prefix+name+"/")
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if subEmpty {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: subHash}
		}
	}
	if len(entries) == 0 && prefix != "" {
		return plumbing.ZeroHash, true, nil
	}
	t := &object.Tree{Entries: make([]object.TreeEntry, 0, len(entries))}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	sort.Sort(object.TreeEntrySorter(t.Entries))
	obj := r.store.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err = r.store.SetEncodedObject(obj)
	return h, false, err
}
