//go:build !windows

package main

// The files in deploy/ are what they claim: HAProxy takes deploy/haproxy.cfg
// both ways the environment selects, and the container's config is one
// mcptrunk loads, serving HTTP where the Dockerfile and the manifests say.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// TestDeployHAProxyConfigs: deploy/haproxy.cfg is valid both ways the
// environment selects, replicas by DNS (Kubernetes) and at fixed
// addresses, and refused with neither.
func TestDeployHAProxyConfigs(t *testing.T) {
	bin := needHAProxy(t)
	for _, c := range []struct {
		name string
		env  []string
		ok   bool
	}{
		{"kubernetes", []string{"MCPTRUNK_DNS=mcptrunk-replicas.default.svc.cluster.local:8080"}, true},
		{"fixed", []string{"MCPTRUNK_REPLICA1=127.0.0.1:8081", "MCPTRUNK_REPLICA2=127.0.0.1:8082"}, true},
		{"neither", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-c", "-f", deployConfig())
			cmd.Env = append(deployEnv(), c.env...)
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.ok {
				t.Errorf("haproxy -c with %v: %v, want valid=%v\n%s", c.env, err, c.ok, out)
			}
			if c.ok && strings.Contains(string(out), "WARNING") {
				t.Errorf("haproxy -c with %v warns:\n%s", c.env, out)
			}
		})
	}
}

// TestDeployContainerConfig: deploy/mcptrunk.json loads, and serves on the
// port, path, token file and signing key that deploy/Dockerfile,
// mcptrunk.yaml, kustomization.yaml and haproxy.cfg assume, with its state
// in the Redis of redis.yaml.
func TestDeployContainerConfig(t *testing.T) {
	t.Setenv("REDIS_PASSWORD", "s3cret") // mcptrunk.yaml sets it from the Secret mcptrunk-redis
	cfg, err := config.Load(filepath.Join(moduleRoot, "deploy", "mcptrunk.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Trunk.HTTP
	if h.Listen != "0.0.0.0:8080" || h.Path != "/mcp" || h.TokenFile != "/run/secrets/mcptrunk/token" || h.SigningKeyFile != "/run/secrets/mcptrunk/signing.key" {
		t.Errorf("deploy/mcptrunk.json trunk.http = %+v; the manifests expect 0.0.0.0:8080, /mcp, and the token and signing key in /run/secrets/mcptrunk", h)
	}
	if len(cfg.Servers) == 0 {
		t.Error("deploy/mcptrunk.json names no server")
	}
	if st := cfg.Trunk.State; st.URL != "redis://:s3cret@mcptrunk-redis:6379/0" || st.KeyFile != "/run/secrets/mcptrunk/state.key" {
		t.Errorf("deploy/mcptrunk.json trunk.state = %+v; redis.yaml serves Redis at mcptrunk-redis:6379 with the password in REDIS_PASSWORD, and the state key is in /run/secrets/mcptrunk", st)
	}
}
