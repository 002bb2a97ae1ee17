package protocol

import "encoding/json"

// ServerCaps are the server capabilities the trunk acts on (what a
// server's initialize or server/discover result declares).
type ServerCaps struct {
	Tools, Prompts, Resources, Subscribe, Logging, Completions bool
}

// ParseServerCaps reads what the trunk acts on from a capabilities object;
// empty raw declares nothing.
func ParseServerCaps(raw json.RawMessage) (ServerCaps, error) {
	var caps struct {
		Tools     *json.RawMessage `json:"tools"`
		Prompts   *json.RawMessage `json:"prompts"`
		Resources *struct {
			Subscribe bool `json:"subscribe"`
		} `json:"resources"`
		Logging     *json.RawMessage `json:"logging"`
		Completions *json.RawMessage `json:"completions"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &caps); err != nil {
			return ServerCaps{}, err
		}
	}
	return ServerCaps{
		Tools:       caps.Tools != nil,
		Prompts:     caps.Prompts != nil,
		Resources:   caps.Resources != nil,
		Subscribe:   caps.Resources != nil && caps.Resources.Subscribe,
		Logging:     caps.Logging != nil,
		Completions: caps.Completions != nil,
	}, nil
}
