package peers

import (
	"context"
	"net"
	"net/url"
)

// toolHive is Stacklok's ToolHive CLI, thv, as its `thv proxy`: the proxy
// ToolHive puts in front of every server it runs (auth, authorization,
// telemetry middleware), here in front of one remote server. It is the
// nearest ToolHive comes to a hop the bench can place: its aggregator, vMCP,
// takes its backends from a group of workloads that thv runs in containers
// (or Kubernetes). thv refuses to start any command without a container
// runtime ("no container runtime available"), so on a machine with none
// this peer fails at start and the table lists it with that error.
var toolHive = Peer{
	Name:    "ToolHive thv proxy v0.47.0",
	Install: "GOBIN=DIR go install github.com/stacklok/toolhive/cmd/thv@v0.47.0, then -peers-bin DIR (later versions need Go 1.27)",
	find: func(env Env) ([]string, error) {
		bin, err := lookBin(env, "thv")
		if err != nil {
			return nil, err
		}
		return []string{bin}, nil
	},
	start: startToolHive,
}

// toolHiveName is the name thv proxy is given for the server it fronts.
const toolHiveName = "conf"

// toolHiveArgs are thv proxy's arguments: the upstream's origin as the
// target (the proxy keeps each request's path) and the port to listen on.
func toolHiveArgs(targetOrigin, port string) []string {
	return []string{"proxy", toolHiveName, "--host", "127.0.0.1", "--port", port, "--target-uri", targetOrigin}
}

func startToolHive(ctx context.Context, env Env, argv []string) (*Running, error) {
	up, err := url.Parse(env.Upstream)
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	p, err := startProcess(append(argv, toolHiveArgs(up.Scheme+"://"+up.Host, port)...), env)
	if err != nil {
		return nil, err
	}
	err = p.waitReady(ctx, func(ctx context.Context) (bool, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, err
		}
		c.Close()
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return &Running{
		Note: "conformance server over streamable HTTP, host side streamable HTTP; a proxy of one server, not an aggregator (tool names unchanged)",
		URL:  "http://" + addr + up.Path, Tool: "test_simple_text", p: p,
	}, nil
}
