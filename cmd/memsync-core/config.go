package main

import (
	"flag"

	"github.com/memsync/memsync/cmd/internal/cmdline"
)

// Config is the configuration of a command (cmdline.Config: defaults,
// memsync.yaml, MEMSYNC_* environment, flags), shared with the front binary.
type Config struct {
	cmdline.Config
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
	return cmdline.LoadConfig(env, repo, fs, &c.Config)
}

// addGraphFlags registers --graph and the --neo4j-* flags bound to c.
func addGraphFlags(fs *flag.FlagSet, c *Config) { cmdline.AddGraphFlags(fs, &c.Config) }
