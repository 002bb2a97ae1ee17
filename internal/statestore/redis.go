package statestore

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// RedisPrefix starts the name of every key the trunk writes to Redis, so
// that it can share a Redis with other programs.
const RedisPrefix = "mcptrunk:"

// Redis is the Backend shared by replicas: each record a Redis string
// expired by Redis itself (PXAT). The client reconnects by itself when
// the server returns; while it is away every operation fails within its
// timeouts (a second or two) rather than waiting.
type Redis struct {
	client *redis.Client
	where  string
}

// OpenRedis connects to the Redis at url (redis:// or rediss://) without
// waiting for it to answer: a trunk starts while its store is down, and
// says so. Errors name trunk.state.url and never quote it.
func OpenRedis(url string) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("trunk.state.url: not a usable Redis URL: %s", redactedErr(err, url))
	}
	opts.DialTimeout = 2 * time.Second
	opts.ReadTimeout = time.Second
	opts.WriteTimeout = time.Second
	opts.MaxRetries = 1
	// One dial per attempt, not go-redis's five 100 ms apart: while Redis
	// refuses connections, each operation fails within its timeouts.
	opts.DialerRetries = 1
	opts.ClientName = "mcptrunk"
	quietRedis.Do(func() { redis.SetLogger(discardRedisLog{}) })
	return &Redis{client: redis.NewClient(opts), where: config.RedactURL(url)}, nil
}

// quietRedis silences go-redis's own log lines once per process: they
// are printed outside slog, on every failed dial, and what they say
// reaches the trunk's log as the store's errors (Status, Watch).
var quietRedis sync.Once

type discardRedisLog struct{}

func (discardRedisLog) Printf(context.Context, string, ...any) {}

// redactedErr is err's text, which go-redis may build from the URL, with
// the URL's password out of it.
func redactedErr(err error, url string) string {
	msg := err.Error()
	if u, perr := neturl.Parse(url); perr == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}

func (r *Redis) Get(ctx context.Context, name string) ([]byte, error) {
	b, err := r.client.Get(ctx, RedisPrefix+name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (r *Redis) Put(ctx context.Context, name string, record []byte, expires time.Time) error {
	args := redis.SetArgs{}
	if !expires.IsZero() {
		args.ExpireAt = expires
	}
	return r.client.SetArgs(ctx, RedisPrefix+name, record, args).Err()
}

// swapScript is Swap in Redis: compare and write in one step.
// KEYS[1] name; ARGV[1] old, ARGV[2] record, ARGV[3] expiry (Unix ms, 0
// for none).
var swapScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) else redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3]) end
return 1`)

func (r *Redis) Swap(ctx context.Context, name string, old, record []byte, expires time.Time) (bool, error) {
	n, err := swapScript.Run(ctx, r.client, []string{RedisPrefix + name}, old, record, toMillis(expires)).Int()
	return n == 1, err
}

func (r *Redis) Take(ctx context.Context, name string) ([]byte, error) {
	b, err := r.client.GetDel(ctx, RedisPrefix+name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (r *Redis) Delete(ctx context.Context, name string) error {
	return r.client.Del(ctx, RedisPrefix+name).Err()
}

func (r *Redis) Ping(ctx context.Context) error { return r.client.Ping(ctx).Err() }
func (r *Redis) Kind() string                   { return "redis" }
func (r *Redis) Where() string                  { return r.where }
func (r *Redis) Close() error                   { return r.client.Close() }

// Client is the connection, for what needs Redis's own operations (the
// counts of trunk.limits, which must be atomic across replicas). Names
// written through it should start with RedisPrefix.
func (r *Redis) Client() *redis.Client { return r.client }
