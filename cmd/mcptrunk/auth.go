package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// authCommand authorises mcptrunk with a remote server that uses OAuth: it
// prints the authorisation URL (and opens a browser), waits for the
// redirect on 127.0.0.1, and stores the tokens where every mcptrunk command
// (and a running trunk) finds them.
type authCommand struct {
	timeout   time.Duration
	noBrowser bool
	logout    bool
}

func (c *authCommand) flags(fs *flagSet) {
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "how long to wait for the authorisation in the browser")
	fs.BoolVar(&c.noBrowser, "no-browser", false, "print the URL without opening a browser")
	fs.BoolVar(&c.logout, "logout", false, "remove the server's stored tokens and client registration instead")
}

func (c *authCommand) run(ctx context.Context, env *environment) error {
	if c.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	logger, err := env.logger(slog.LevelWarn)
	if err != nil {
		return err
	}
	cfg, err := env.loadConfig()
	if err != nil {
		return err
	}
	spec, id, err := findRemoteServer(cfg, env.args[0])
	if err != nil {
		return err
	}
	if c.logout {
		removed, err := oauth.ForgetAuthorization(upstream.OAuthServer(spec))
		if err != nil {
			return fmt.Errorf("server %q: %w", id, err)
		}
		if removed {
			fmt.Fprintf(env.stdout, "server %q: stored tokens removed\n", id)
		} else {
			fmt.Fprintf(env.stdout, "server %q: no tokens were stored\n", id)
		}
		return nil
	}

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := oauth.Authorize(ctx, upstream.OAuthServer(spec), oauth.AuthorizeOptions{
		Logger:      logger,
		OpenBrowser: !c.noBrowser && os.Getenv(upstream.NoBrowserEnv) == "",
		Prompt: func(authURL string) {
			// stderr, like every message of mcptrunk; stdout says the outcome.
			fmt.Fprintf(env.stderr, "To authorise mcptrunk for server %q, open this URL in a browser:\n\n  %s\n\nWaiting up to %s for the authorisation...\n",
				id, authURL, c.timeout)
		},
	})
	if err != nil {
		return fmt.Errorf("server %q: %w", id, err)
	}
	detail := ""
	if !res.Expiry.IsZero() {
		detail = fmt.Sprintf("; the access token expires at %s", res.Expiry.Local().Format(time.DateTime))
		if res.Refreshable {
			detail += " and is refreshed automatically"
		}
	}
	fmt.Fprintf(env.stdout, "server %q: authorised%s\ntokens stored in %s\n", id, detail, res.File)
	return nil
}

// findRemoteServer finds the server called name (its config name or its
// id) and checks that OAuth applies to it.
func findRemoteServer(cfg *config.Config, name string) (config.Spec, string, error) {
	var remote []string
	for _, s := range cfg.Servers {
		id, err := naming.ServerID(s.Name)
		if err != nil {
			id = s.Name
		}
		if s.Name == name || id == name {
			switch {
			case s.Invalid != nil:
				return s, id, fmt.Errorf("server %q: %w", id, s.Invalid)
			case s.Type != config.TransportHTTP && s.Type != config.TransportSSE:
				return s, id, fmt.Errorf("server %q is not a remote server: OAuth is for \"http\" and \"sse\" servers", id)
			case !s.UsesOAuth():
				return s, id, fmt.Errorf("server %q has an Authorization header in its config, which turns OAuth off", id)
			}
			return s, id, nil
		}
		if s.UsesOAuth() {
			remote = append(remote, id)
		}
	}
	sort.Strings(remote)
	hint := "no remote server in the config uses OAuth"
	if len(remote) > 0 {
		hint = "remote servers: " + strings.Join(remote, ", ")
	}
	return config.Spec{}, "", fmt.Errorf("no server %q in the config (%s)", name, hint)
}
