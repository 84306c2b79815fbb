package main

import (
	"context"

	"github.com/memsync/memsync/memsync"
)

// unreachable stands in for a graph that could not be opened, so that
// read-only commands still answer from the journals and say why.
type unreachable struct {
	err      error
	identity string
}

var _ memsync.Graph = unreachable{}

func (u unreachable) Apply(context.Context, []memsync.Memory) (memsync.ApplyResult, error) {
	return memsync.ApplyResult{}, u.err
}
func (u unreachable) Drop(context.Context) error                   { return u.err }
func (u unreachable) Stats(context.Context) (memsync.Stats, error) { return memsync.Stats{}, u.err }
func (u unreachable) Walk(context.Context, func(memsync.Node) error) error {
	return u.err
}
func (u unreachable) Hashes(context.Context, func(uuid, hash string) error) error {
	return u.err
}
func (u unreachable) Get(context.Context, []string) (map[string]memsync.Node, error) {
	return nil, u.err
}
func (u unreachable) Lexical(context.Context, []string, memsync.Filter, int) ([]memsync.Found, error) {
	return nil, u.err
}
func (u unreachable) Neighbours(context.Context, []memsync.Node, memsync.Filter) ([]memsync.Beside, error) {
	return nil, u.err
}
func (u unreachable) Similar(context.Context, string, memsync.Filter, int) ([]memsync.Found, error) {
	return nil, u.err
}
func (u unreachable) Incoming(context.Context, []string) ([]memsync.Reference, error) {
	return nil, u.err
}
func (u unreachable) Identity() string { return u.identity }
func (u unreachable) Close() error     { return nil }
