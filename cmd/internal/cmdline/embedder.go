package cmdline

import (
	"fmt"

	"github.com/memsync/memsync/memsync/embed"
)

// ResolveEmbedder turns the embedder setting (Config.Embedder) into a
// model: nil for none (or empty), env.Embedder's answer when it is set
// (tests), the model built into the binary for "default", else the model
// directory spec names. memsync-core's recall and the front binary's
// surprise gate resolve it here, so both use the same model. The built-in
// model costs nothing until its first Embed: its bytes are the binary's
// read-only data, paged in when read.
func ResolveEmbedder(env *Env, spec string) (Embedder, error) {
	switch {
	case spec == "" || spec == "none":
		return nil, nil
	case env.Embedder != nil:
		return env.Embedder(spec)
	case spec == "default":
		return embed.Default(), nil
	default:
		m, err := embed.Load(spec)
		if err != nil {
			return nil, fmt.Errorf("--embedder %s: %w", spec, err)
		}
		return m, nil
	}
}
