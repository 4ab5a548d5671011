package server

import (
	"errors"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
)

// Pipelined test calls (issue 31; DECISIONS "Test calls"). The page sends
// start_mcp_test_call and test_mcp_tool_call together, without waiting for
// the start's acknowledgement, which saves a round trip. A socket's
// commands run concurrently (socket.run), so the socket orders what
// depends on a start: a test_mcp_tool_call or cancel_mcp_test_call read
// after a start_mcp_test_call with the same callId waits until that start
// has finished, and the call then learns what became of it
// (service.PipelinedStart): a start that failed fails the call with the
// start's error, a cancel read while the start ran makes it not_sent
// (mcp.call_cancelled_before_send); either way nothing reaches the server.
// Only those two commands of that call id wait, and a page that waits for
// the acknowledgement first (upstream's protocol) meets a finished start.
//
// run_mcp_test_call (the shim's, one frame each way) is a start and its
// call in one command: its frame is a start its call has claimed, and a
// cancel read while its start runs waits until the call is registered
// (service.WithStarted), then stops it as any cancel does.

// startGate is one start_mcp_test_call of the socket, from the moment its
// frame is read until its call has learnt how it ended.
type startGate struct {
	id   string
	seq  uint64        // its place among the socket's start frames
	done chan struct{} // closed when the start has finished

	// under socket.mu, and fixed once done is closed:
	finished  bool
	err       error // the start's failure
	cancelled bool  // a cancel of its call id was read while it ran
	claimed   bool  // its call is waiting for it

	kept bool // finished and kept in testOrder for its call (under socket.mu)
}

// testOrder is a socket's starts that a call may still have to wait for
// or hear about (under socket.mu).
type testOrder struct {
	seq uint64                  // start frames read
	ids map[string][]*startGate // by call id, in frame order
	// kept counts finished gates kept for a call that has not been read:
	// a failed or cancelled start's (a successful one needs no keeping:
	// the service holds its registration).
	kept int
}

// maxKeptStarts bounds the finished starts a socket keeps for a call yet
// to come; a start beyond it is forgotten when it finishes, and its call
// is then decided by the service alone (not_sent mcp.call_not_started).
const maxKeptStarts = 64

// startRead registers the start frame with args, read now; claimed: the
// frame is run_mcp_test_call, whose call is itself (a cancel read while
// its start runs waits for it; no test_mcp_tool_call pairs with it).
func (sk *socket) startRead(args jsontext.Value, claimed bool) *startGate {
	id, ok := callIDOf(args)
	if !ok {
		return nil // the start fails on its dto; no call can pair with it
	}
	sk.mu.Lock()
	defer sk.mu.Unlock()
	o := &sk.order
	if o.ids == nil {
		o.ids = map[string][]*startGate{}
	}
	o.seq++
	g := &startGate{id: id, seq: o.seq, done: make(chan struct{}), claimed: claimed}
	o.ids[id] = append(o.ids[id], g)
	return g
}

// startsRead is read with a test call's frame: how many start frames came
// before it, 0 when the socket has no start it could wait for.
func (sk *socket) startsRead() uint64 {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if len(sk.order.ids) == 0 {
		return 0
	}
	return sk.order.seq
}

// startFinished records how the start of g ended and releases what waits
// for it, only the first time (a run_mcp_test_call may tell it twice);
// cancelled: a cancel of its call id was read while it ran.
func (sk *socket) startFinished(g *startGate, err error) (cancelled bool) {
	sk.mu.Lock()
	if g.finished {
		sk.mu.Unlock()
		return g.cancelled
	}
	g.finished, g.err = true, err
	if (err != nil || g.cancelled) && !g.claimed && sk.order.kept < maxKeptStarts {
		g.kept = true
		sk.order.kept++
	} else {
		sk.order.remove(g)
	}
	sk.mu.Unlock()
	close(g.done)
	return g.cancelled
}

// cancelRead is read with a cancel frame with args: the last start of its
// call id, marked cancelled if it is still running, for the cancel to wait
// for (nil: none).
func (sk *socket) cancelRead(args jsontext.Value) *startGate {
	sk.mu.Lock()
	empty := len(sk.order.ids) == 0
	sk.mu.Unlock()
	if empty {
		return nil
	}
	return sk.startOf(args, func(gates []*startGate) *startGate {
		g := gates[len(gates)-1]
		if !g.finished {
			g.cancelled = true
		}
		return g
	})
}

// callRead returns the start a test call with args, read after the first
// seq start frames, waits for: the last start of its call id among them,
// while it is known; the call claims it.
func (sk *socket) callRead(args jsontext.Value, seq uint64) *startGate {
	return sk.startOf(args, func(gates []*startGate) *startGate {
		for i := len(gates) - 1; i >= 0; i-- {
			g := gates[i]
			if g.seq > seq {
				continue
			}
			if g.finished { // kept for this call, which has now heard
				sk.order.remove(g)
			} else {
				g.claimed = true
			}
			return g
		}
		return nil
	})
}

// startOf picks, under socket.mu, one of the starts of the call id of args
// (nil when it has none or cannot be read).
func (sk *socket) startOf(args jsontext.Value, pick func([]*startGate) *startGate) *startGate {
	id, ok := callIDOf(args)
	if !ok {
		return nil
	}
	sk.mu.Lock()
	defer sk.mu.Unlock()
	gates := sk.order.ids[id]
	if len(gates) == 0 {
		return nil
	}
	return pick(gates)
}

// remove forgets g (under socket.mu).
func (o *testOrder) remove(g *startGate) {
	gates := o.ids[g.id]
	for i, x := range gates {
		if x == g {
			gates = append(gates[:i:i], gates[i+1:]...)
			break
		}
	}
	if len(gates) == 0 {
		delete(o.ids, g.id)
	} else {
		o.ids[g.id] = gates
	}
	if g.kept {
		g.kept = false
		o.kept--
	}
}

// pipelined is what a call that waited for g hears of its start.
func (g *startGate) pipelined() (service.PipelinedStart, bool) {
	if g.err == nil && !g.cancelled {
		return service.PipelinedStart{}, false
	}
	return service.PipelinedStart{Err: domainError(g.err), Cancelled: g.cancelled}, true
}

// callIDOf reads dto.callId of a test-call command's args, leniently
// (other members are the command's strict decoding's business).
func callIDOf(args jsontext.Value) (string, bool) {
	var in struct {
		DTO struct {
			CallID *string `json:"callId"`
		} `json:"dto"`
	}
	if len(args) == 0 || json.Unmarshal(args, &in) != nil || in.DTO.CallID == nil {
		return "", false
	}
	return *in.DTO.CallID, true
}

// domainError gives a wire error (the decoding's) a domain kind and code,
// for the call's audit record, wrapping it so the call's result frame
// carries the very body the start's did.
func domainError(err error) error {
	var we *wireError
	if err == nil || domain.CodeOf(err) != "" || !errors.As(err, &we) {
		return err
	}
	kind := domain.KindInternal
	for k := domain.KindInternal; k <= domain.KindUnavailable; k++ {
		if k.String() == we.body.Kind {
			kind = k
		}
	}
	return &domain.Error{Kind: kind, Code: we.body.Code, Detail: strings.TrimPrefix(we.body.Message, we.body.Code+": "), Err: err}
}
