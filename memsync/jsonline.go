package memsync

import (
	"bytes"
	"encoding/json"
)

// jsonLine encodes v as one line of JSON (no HTML escaping) ending in \n.
func jsonLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
