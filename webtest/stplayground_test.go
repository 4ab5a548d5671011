package webtest

// The playground's SillyTavern 1.18 stand-ins that resources and prompts
// rely on (backend/server/playground/host/prompts.js and slash-commands.js,
// with st-chat.js's prompt assembly and its /send and /trigger), checked
// on their own, with no extension loaded: what the fake model receives is
// what SillyTavern's openai.js would send for the same extension prompts.

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// roles lists a request's messages as "role: content".
func (r chatRequest) roles() []string {
	var out []string
	for _, m := range r.Messages {
		c := ""
		if m.Content != nil {
			c = *m.Content
		}
		out = append(out, m.Role+": "+c)
	}
	return out
}

// Extension prompts go where SillyTavern's openai.js puts them: before and
// after the main prompt (each its own message, in key order, with its
// role), in the chat per depth (messages from the end; one message per
// role at a depth, values joined by newlines, the system one nearest the
// end, then user, then assistant); an empty value is nothing; opening another chat empties them
// (clearChat).
func TestPlaygroundExtensionPrompts(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	llm := newChatServer(t)
	loadSTChatNow(p, llm)
	llm.script(reply{Text: "one"}, reply{Text: "two"})
	p.run(`
		const ctx = SillyTavern.getContext();
		stChat.mainPrompt = 'MAIN';
		for (const t of ['u1', 'u2', 'u3']) await ctx.executeSlashCommandsWithOptions('/send ' + t);
		// in the chat
		ctx.setExtensionPrompt('b_at1', 'at depth 1, second key', 1, 1, false, 0);
		ctx.setExtensionPrompt('a_at1', 'at depth 1, first key', 1, 1, false, 0);
		ctx.setExtensionPrompt('c_at1u', 'at depth 1 as user', 1, 1, false, 1);
		ctx.setExtensionPrompt('d_at0', 'at depth 0', 1, 0, false, 2);
		ctx.setExtensionPrompt('e_deep', 'deeper than the chat', 1, 99, false, 0);
		ctx.setExtensionPrompt('f_empty', '', 1, 2, false, 0);
		// before and after the main prompt
		ctx.setExtensionPrompt('g_before', 'before main', 2, 0, false, 1);
		ctx.setExtensionPrompt('h_after', 'after main', 0, 0, false, 0);
		await ctx.executeSlashCommandsWithOptions('/trigger');`)
	reqs := llm.requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests; want 1", len(reqs))
	}
	want := []string{
		"user: before main",
		"system: MAIN",
		"system: after main",
		"system: deeper than the chat",
		"user: u1",
		"user: u2",
		"user: at depth 1 as user",
		"system: at depth 1, first key\nat depth 1, second key",
		"user: u3",
		"assistant: at depth 0",
	}
	if got := reqs[0].roles(); !slices.Equal(got, want) {
		t.Errorf("messages\n got %q\nwant %q", got, want)
	}
	if keys := evalJS[[]string](p, `return Object.keys(SillyTavern.getContext().extensionPrompts).sort();`); len(keys) != 8 {
		t.Errorf("extensionPrompts keys %v", keys)
	}

	// another chat: SillyTavern's clearChat empties them
	p.run(`
		const sel = document.getElementById('ttmcp_chat');
		sel.value = 'c1'; sel.dispatchEvent(new Event('change'));
		await new Promise((r) => setTimeout(r, 50));
		await SillyTavern.getContext().executeSlashCommandsWithOptions('/trigger');`)
	reqs = llm.requests()
	if got := reqs[1].roles(); slices.ContainsFunc(got, func(s string) bool {
		return strings.Contains(s, "depth") || strings.Contains(s, "main") && s != "system: MAIN"
	}) {
		t.Errorf("after another chat opened, the request still has extension prompts: %q", got)
	}
	if n := evalJS[int](p, `return Object.keys(SillyTavern.getContext().extensionPrompts).length;`); n != 0 {
		t.Errorf("%d extension prompts after another chat opened", n)
	}
}

// A depth counts chat messages: a saved tool-call record is one, however
// many messages it becomes in the request.
func TestPlaygroundExtensionPromptDepthCountsChatMessages(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	llm := newChatServer(t)
	loadSTChatNow(p, llm)
	llm.script(reply{Text: "ok"})
	p.run(`
		const ctx = SillyTavern.getContext();
		stChat.chat.push({ is_user: true, mes: 'u1' });
		stChat.chat.push({ is_system: true, is_user: false, mes: 'Tool calls: x', extra: { tool_invocations: [{ id: 'c1', name: 'x', parameters: '{}', result: 'r1' }] } });
		stChat.chat.push({ is_user: false, mes: 'a1' });
		ctx.setExtensionPrompt('k', 'INJECTED', 1, 2, false, 0);
		await ctx.executeSlashCommandsWithOptions('/trigger');`)
	got := llm.requests()[0].roles()
	want := []string{"system: INJECTED", "assistant: ", "tool: r1", "assistant: a1"}
	if len(got) != 5 || !slices.Equal(got[1:], want) || got[0] != "user: u1" {
		t.Errorf("messages %q; want u1, then %q", got, want)
	}
}

// SlashCommandParser & co. as an extension uses them: a registered
// command gets its named arguments (quoted values with spaces, names it
// did not declare, SillyTavern's own _members), its unnamed one, and the
// previous command's result as the pipe; /setinput puts text in the input
// box; an unknown command is a parser error toast; a failing callback is an
// execution error.
func TestPlaygroundSlashCommands(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	got := evalJS[map[string]any](p, `
		window.toasts = [];
		for (const level of ['info', 'error']) toastr[level] = (text, title) => toasts.push(level + ': ' + title + ': ' + text);
		const ctx = SillyTavern.getContext();
		const seen = [];
		ctx.SlashCommandParser.addCommandObject(ctx.SlashCommand.fromProps({
			name: 'probe',
			callback: (args, value) => {
				seen.push({ named: Object.fromEntries(Object.entries(args).filter(([k]) => !k.startsWith('_'))), own: Object.keys(args).filter((k) => k.startsWith('_')).sort(), value });
				return 'from probe: ' + (args.topic ?? '');
			},
			namedArgumentList: [ctx.SlashCommandNamedArgument.fromProps({ name: 'server', description: 'd', typeList: [ctx.ARGUMENT_TYPE.STRING], isRequired: true,
				enumProvider: () => [new ctx.SlashCommandEnumValue('Docs', 'the docs')] })],
		}));
		ctx.SlashCommandParser.addCommandObject(ctx.SlashCommand.fromProps({ name: 'boom', callback: () => { throw new Error('it broke'); } }));
		const r1 = await ctx.executeSlashCommandsWithOptions('/probe server=Docs topic="two words" extra=1 free text | /setinput');
		const r2 = await ctx.executeSlashCommandsWithOptions('/nonesuch x');
		let thrown = '';
		try { await ctx.executeSlashCommandsWithOptions('/boom'); } catch (e) { thrown = e.constructor.name + ': ' + e.message; }
		const r3 = await ctx.executeSlashCommandsWithOptions('/boom', { handleExecutionErrors: true });
		const enumValues = ctx.SlashCommandParser.commands.probe.namedArgumentList[0].enumProvider({}, {}).map((v) => v.value + ' ' + v.description);
		return { seen, pipe: r1.pipe, input: document.getElementById('send_textarea').value, r2: r2.pipe ?? null, thrown, r3: r3.isError, toasts, enumValues };`)
	want := map[string]any{
		"seen": []any{map[string]any{
			"named": map[string]any{"server": "Docs", "topic": "two words", "extra": "1"},
			"own":   []any{"_abortController", "_debugController", "_hasUnnamedArgument", "_parserFlags", "_scope"},
			"value": "free text",
		}},
		"pipe":       "",
		"input":      "from probe: two words",
		"r2":         nil,
		"thrown":     "SlashCommandExecutionError: it broke",
		"r3":         true,
		"toasts":     []any{`error: SlashCommandParserError: Unknown command at position 1: "/nonesuch"`, "error: SlashCommandExecutionError: it broke"},
		"enumValues": []any{"Docs the docs"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}

	// Enter in the input box runs a slash command
	p.run(`
		const box = document.getElementById('send_textarea');
		box.value = '/echo hello there';
		box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
		await new Promise((r) => setTimeout(r, 50));`)
	if toasts := evalJS[[]string](p, `return toasts;`); toasts[len(toasts)-1] != "info: undefined: hello there" {
		t.Errorf("after Enter: toasts %q", toasts)
	}
}
