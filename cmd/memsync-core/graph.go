package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/memsync"
)

// openGraph opens the backend the configuration names: the embedded store
// under <repo>/.memsync, or Neo4j. The password is read here and goes only
// to the driver.
func openGraph(ctx context.Context, cfg *Config, repo string, lg *zap.Logger) (memsync.Graph, error) {
	switch cfg.graph() {
	case graphNeo4j:
		pw, err := cfg.Neo4jPassword()
		if err != nil {
			return nil, err
		}
		user := cfg.Neo4j.User
		if pw == "" {
			user = "" // a server without auth (the test server) takes no credentials
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		g, err := neo4j.Open(octx, neo4j.Config{URI: cfg.Neo4j.URI, User: user, Password: pw, Database: cfg.Neo4j.Database, Embedder: cfg.emb,
			Graphiti: cfg.Neo4j.Graphiti, GraphitiPrivate: cfg.Neo4j.GraphitiPrivate}, lg)
		if err != nil {
			return nil, err
		}
		return g, nil
	default:
		g, err := embedded.Open(layout(repo).LocalDir(), lg, embedded.WithEmbedder(cfg.emb))
		if err != nil {
			return nil, err
		}
		return g, nil
	}
}

// openReadGraph opens the configured graph for a read command (search,
// packet, show, explain) without the writer's work at open: the embedded
// store read-only (embedded.OpenReadOnly: no schema work, no indexer,
// nothing written), Neo4j without creating its schema
// (neo4j.OpenReadOnly). When the store needs that work first (no file yet,
// a migration, a search file behind, an index missing), it opens as
// openGraph does.
func openReadGraph(ctx context.Context, cfg *Config, repo string, lg *zap.Logger) (memsync.Graph, error) {
	var err error
	if cfg.graph() == graphNeo4j {
		var pw string
		if pw, err = cfg.Neo4jPassword(); err != nil {
			return nil, err
		}
		user := cfg.Neo4j.User
		if pw == "" {
			user = "" // a server without auth (the test server) takes no credentials
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var g *neo4j.Graph
		g, err = neo4j.OpenReadOnly(octx, neo4j.Config{URI: cfg.Neo4j.URI, User: user, Password: pw, Database: cfg.Neo4j.Database, Embedder: cfg.emb}, lg)
		if err == nil {
			return g, nil
		}
		if !errors.Is(err, neo4j.ErrNotReadable) {
			return nil, err
		}
	} else {
		var g *embedded.Graph
		// Whatever keeps the read-only open from serving, the writer's open
		// either cures it or says what is wrong.
		if g, err = embedded.OpenReadOnly(layout(repo).LocalDir(), lg, embedded.WithEmbedder(cfg.emb)); err == nil {
			return g, nil
		}
	}
	lg.Debug("graph not readable as it is: opening it as a writer", zap.Error(err))
	return openGraph(ctx, cfg, repo, lg)
}

// isUnavailable says whether err means the graph could not be reached.
func isUnavailable(err error) bool {
	return errors.Is(err, memsync.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// newLogger builds the stderr logger: JSON for services (stderr not a
// terminal) and console text on a terminal, unless log.format says
// otherwise. Repeated messages are sampled so a failure that repeats every
// second does not flood the log.
func newLogger(cfg *Config, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(cfg.Log.Level)
	if err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	format := cfg.Log.Format
	if format == "" || format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "console"
		}
	}
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	if format == "console" {
		ec.EncodeLevel = zapcore.CapitalColorLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	} else {
		enc = zapcore.NewJSONEncoder(ec)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)
	// The first 5 identical messages a second, then one in 100.
	core = zapcore.NewSamplerWithOptions(core, time.Second, 5, 100)
	return zap.New(core), nil
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// repoCmd is the flag set of a command that works on a repository with its
// configuration: --repo plus the graph flags.
type repoCmd struct {
	*cmdFlags
	repoFlag *string
	cfg      Config
}

func newRepoCmd(env *Env, name, synopsis, description string) *repoCmd {
	c := &repoCmd{cmdFlags: newFlags(env, name, synopsis, description)}
	c.repoFlag = addRepoFlag(c.cmdFlags)
	addGraphFlags(c.FlagSet, &c.cfg)
	return c
}

// load parses args, finds the existing repository and loads its
// configuration; done says the command must return code.
func (c *repoCmd) load(args []string) (repo string, positional []string, code int, done bool) {
	positional, code, done = c.parse(args)
	if done {
		return "", nil, code, true
	}
	repo, err := existingRepo(c.Env, *c.repoFlag)
	if err != nil {
		return "", nil, c.usageErr("%v", err), true
	}
	if err := loadConfig(c.Env, repo, c.FlagSet, &c.cfg); err != nil {
		return "", nil, c.usageErr("%v", err), true
	}
	return repo, positional, 0, false
}
