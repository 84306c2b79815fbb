package main

import (
	"flag"
	"fmt"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/memsync"
)

// Config is the configuration of a command (cmdline.Config: defaults,
// memsync.yaml, MEMSYNC_* environment, flags), shared with the front binary.
type Config struct {
	cmdline.Config
	emb memsync.Embedder // resolved from Embedder by loadConfig; nil: lexical only
}

// graph is the backend in effect.
func (c *Config) graph() string { return c.Backend() }

// The graph backends.
const (
	graphEmbedded = cmdline.GraphEmbedded
	graphNeo4j    = cmdline.GraphNeo4j
)

// defaultConfigYAML is the memsync.yaml that init writes.
const defaultConfigYAML = cmdline.DefaultConfigYAML

// loadConfig fills *c for repo; see cmdline.LoadConfig.
func loadConfig(env *Env, repo string, fs *flag.FlagSet, c *Config) error {
	if err := cmdline.LoadConfig(env, repo, fs, &c.Config); err != nil {
		return err
	}
	emb, err := resolveEmbedder(env, c.Embedder)
	if err != nil {
		return fmt.Errorf("embedder: %w", err)
	}
	c.emb = emb
	return nil
}

// resolveEmbedder turns the embedder setting into a model
// (cmdline.ResolveEmbedder): none (or empty) is lexical recall only.
func resolveEmbedder(env *Env, spec string) (memsync.Embedder, error) {
	emb, err := cmdline.ResolveEmbedder(env, spec)
	if err != nil || emb == nil {
		return nil, err
	}
	return emb, nil
}

// addGraphFlags registers --graph and the --neo4j-* flags bound to c.
func addGraphFlags(fs *flag.FlagSet, c *Config) { cmdline.AddGraphFlags(fs, &c.Config) }

// addGraphitiFlags registers --graphiti and --graphiti-private bound to c.
func addGraphitiFlags(fs *flag.FlagSet, c *Config) { cmdline.AddGraphitiFlags(fs, &c.Config) }
