package audit

import (
	"errors"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// errQueueFull is the failure of a line the writer was too far behind to
// take.
var errQueueFull = errors.New("the audit writer is behind; line dropped")

// warnEvery spaces the log records of a failure that goes on: the first
// failure is logged at once, then one record per interval with the count,
// so a full disk does not flood the trunk's own log.
const warnEvery = time.Minute

// fail counts n dropped lines and logs the failure, rate-limited.
func (l *Log) fail(n int, err error) {
	total := l.dropped.Add(int64(n))
	l.failMu.Lock()
	defer l.failMu.Unlock()
	l.unlogged += int64(n)
	now := l.opts.now()
	if l.failing && now.Sub(l.lastWarn) < warnEvery {
		return
	}
	l.failing = true
	l.lastWarn = now
	l.logger.Warn("audit lines dropped", "lines", l.unlogged, "droppedTotal", total, logkey.Error, err)
	l.unlogged = 0
}

// recovered logs the first line written after failures.
func (l *Log) recovered() {
	l.failMu.Lock()
	defer l.failMu.Unlock()
	if !l.failing {
		return
	}
	l.failing = false
	l.logger.Info("audit log written again", "droppedSinceLastWarning", l.unlogged, "droppedTotal", l.dropped.Load())
	l.unlogged = 0
}
