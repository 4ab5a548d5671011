// SillyTavern's Popup contract (public/scripts/popup.js, newest): the
// constructor options, the DOM cloned from #popup_template, what show()
// resolves to, the onClosing veto, Enter/Escape handling and stacking.
// Written from sillytavern-host-notes.md §3; the CROP type shows the image
// and returns it whole (the page has no cropper).

/** SillyTavern's uuidv4 (utils.js): crypto.randomUUID exists only in secure contexts, and a page at a LAN address over http is not one. */
function uuidv4() {
    if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const POPUP_TYPE = Object.freeze({
    TEXT: 1,
    CONFIRM: 2,
    INPUT: 3,
    DISPLAY: 4,
    CROP: 5,
});

export const POPUP_RESULT = Object.freeze({
    AFFIRMATIVE: 1,
    NEGATIVE: 0,
    CANCELLED: null,
    CUSTOM1: 1001,
    CUSTOM2: 1002,
    CUSTOM3: 1003,
    CUSTOM4: 1004,
    CUSTOM5: 1005,
    CUSTOM6: 1006,
    CUSTOM7: 1007,
    CUSTOM8: 1008,
    CUSTOM9: 1009,
});

/** How long two Escapes may be apart to offer a force-close. */
const DOUBLE_ESCAPE_MS = 500;
/** The longest a popup waits for its opening or closing animation. */
const MAX_ANIMATION_MS = 500;

export class Popup {
    /** @type {Popup['value']} */ value;
    /** @type {number|null|undefined} */ result;
    /** @type {Map<string, string|boolean>|undefined} */ inputResults;
    /** @type {HTMLElement|undefined} */ lastFocus;

    #promise;
    #resolve;
    #hiding = false;
    #closingByUs = false;
    #browserClosing = false;
    #forceClosePending = false;
    #lastEscape = 0;
    #allowEscapeClose;

    /**
     * @param {string|HTMLElement|object} content HTML string, element or jQuery object
     * @param {number} type a POPUP_TYPE
     * @param {string} inputValue the INPUT field's initial value
     * @param {object} options see sillytavern-host-notes.md §3.1
     */
    constructor(content, type, inputValue = '', {
        okButton = null, cancelButton = null, rows = 1, placeholder = null, tooltip = null,
        wide = false, wider = false, large = false, transparent = false,
        allowHorizontalScrolling = false, allowVerticalScrolling = false, leftAlign = false,
        animation = 'fast', defaultResult = POPUP_RESULT.AFFIRMATIVE,
        customButtons = null, customInputs = null, allowEscapeClose = true,
        onClosing = null, onClose = null, onOpen = null, cropAspect = null, cropImage = null,
    } = {}) {
        Popup.util.popups.push(this);
        this.id = uuidv4();
        this.type = type;
        this.onClosing = onClosing;
        this.onClose = onClose;
        this.onOpen = onOpen;
        this.cropAspect = cropAspect;
        this.#allowEscapeClose = allowEscapeClose !== false;

        const template = /** @type {HTMLTemplateElement} */ (document.getElementById('popup_template'));
        const caption = (name, fallback) => template?.getAttribute('popup-button-' + name) ?? fallback;
        this.dlg = /** @type {HTMLDialogElement} */ (template.content.querySelector('.popup').cloneNode(true));
        this.body = this.dlg.querySelector('.popup-body');
        this.content = this.dlg.querySelector('.popup-content');
        this.mainInput = this.dlg.querySelector('.popup-input');
        this.inputControls = this.dlg.querySelector('.popup-inputs');
        this.buttonControls = this.dlg.querySelector('.popup-controls');
        this.okButton = this.dlg.querySelector('.popup-button-ok');
        this.cancelButton = this.dlg.querySelector('.popup-button-cancel');
        this.closeButton = this.dlg.querySelector('.popup-button-close');
        this.cropWrap = this.dlg.querySelector('.popup-crop-wrap');
        this.cropImage = this.dlg.querySelector('.popup-crop-image');

        this.dlg.setAttribute('data-id', this.id);
        const classes = {
            wide_dialogue_popup: wide,
            wider_dialogue_popup: wider,
            large_dialogue_popup: large,
            transparent_dialogue_popup: transparent,
            horizontal_scrolling_dialogue_popup: allowHorizontalScrolling,
            vertical_scrolling_dialogue_popup: allowVerticalScrolling,
            left_aligned_dialogue_popup: leftAlign,
        };
        for (const [name, on] of Object.entries(classes)) if (on) this.dlg.classList.add(name);
        if (animation) this.dlg.classList.add('popup--animation-' + animation);

        this.okButton.textContent = typeof okButton === 'string' ? okButton : 'OK';
        this.okButton.dataset.i18n = this.okButton.textContent;
        this.cancelButton.textContent = typeof cancelButton === 'string' ? cancelButton : caption('cancel', 'Cancel');
        this.cancelButton.dataset.i18n = this.cancelButton.textContent;

        this.defaultResult = defaultResult;
        this.customButtons = customButtons;
        customButtons?.forEach((entry, index) => this.#addCustomButton(entry, index));
        this.customInputs = customInputs;
        customInputs?.forEach((input) => this.#addCustomInput(input));

        this.buttonControls.querySelector(`[data-result="${this.defaultResult}"]`)?.classList.add('menu_button_default');

        // What each type shows (notes §3.1, "Per-type buttons").
        this.mainInput.style.display = 'none';
        this.inputControls.style.display = customInputs ? 'block' : 'none';
        this.closeButton.style.display = 'none';
        this.cropWrap.style.display = 'none';
        const hideIfFalse = () => {
            if (okButton === false) this.okButton.style.display = 'none';
            if (cancelButton === false) this.cancelButton.style.display = 'none';
        };
        switch (type) {
            case POPUP_TYPE.TEXT:
                if (okButton === false) this.okButton.style.display = 'none';
                if (!cancelButton) this.cancelButton.style.display = 'none';
                break;
            case POPUP_TYPE.CONFIRM:
                hideIfFalse();
                if (!okButton) this.okButton.textContent = caption('yes', 'Yes');
                if (!cancelButton) this.cancelButton.textContent = caption('no', 'No');
                break;
            case POPUP_TYPE.INPUT:
                this.mainInput.style.display = 'block';
                hideIfFalse();
                if (!okButton) this.okButton.textContent = caption('save', 'Save');
                break;
            case POPUP_TYPE.DISPLAY:
                this.buttonControls.style.display = 'none';
                this.closeButton.style.display = 'block';
                break;
            case POPUP_TYPE.CROP:
                this.cropWrap.style.display = 'block';
                this.cropImage.src = cropImage ?? '';
                hideIfFalse();
                if (!okButton) this.okButton.textContent = caption('crop', 'Crop');
                break;
            default:
                console.warn('Unknown popup type.', type);
        }

        this.mainInput.value = inputValue ?? '';
        this.mainInput.rows = rows ?? 1;
        if (placeholder) this.mainInput.placeholder = placeholder;
        if (tooltip) (type === POPUP_TYPE.INPUT ? this.mainInput : this.content).title = tooltip;

        this.content.innerHTML = '';
        if (globalThis.jQuery && content instanceof globalThis.jQuery) {
            globalThis.jQuery(this.content).append(content);
        } else if (content instanceof HTMLElement) {
            this.content.append(content);
        } else if (typeof content === 'string') {
            this.content.innerHTML = content;
        } else {
            console.warn('Unknown popup content: want an HTML string, an HTMLElement or a jQuery object.', content);
        }

        this.setAutoFocus({ applyAutoFocus: true });
        this.dlg.addEventListener('focusin', (evt) => {
            if (evt.target instanceof HTMLElement && evt.target !== this.dlg) this.lastFocus = evt.target;
        });

        // Every element with a data-result completes the popup with it, on
        // its data-result-event (click by default), content included.
        for (const control of this.dlg.querySelectorAll('[data-result]')) {
            if (!(control instanceof HTMLElement) || control.dataset.result === 'undefined') continue;
            const result = control.dataset.result === 'null' ? null : Number(control.dataset.result);
            if (result !== null && Number.isNaN(result)) {
                throw new Error('Invalid result control. Result must be a number. ' + control.dataset.result);
            }
            control.addEventListener(control.dataset.resultEvent || 'click', () => this.complete(result));
        }

        // Escape fires `cancel`. Chromium makes it non-cancelable when the
        // page had no user activation since the dialog opened, and then
        // closes the dialog itself: the close listener re-opens it unless
        // the popup is closing anyway, so the popup alone decides.
        this.dlg.addEventListener('cancel', (evt) => {
            if (evt.cancelable) evt.preventDefault();
            else this.#browserClosing = true;
            evt.stopPropagation();
            this.#escape();
        });
        this.dlg.addEventListener('close', (evt) => {
            if (this.#closingByUs) return;
            evt.stopPropagation();
            const fromEscape = this.#browserClosing;
            this.#browserClosing = false;
            if (this.#hiding) return;
            if (this.dlg.isConnected) this.dlg.showModal();
            if (!fromEscape) this.#escape(); // closed some other way (a form, dlg.close())
            else if (this.#forceClosePending) this.#offerForceClose();
        });
        this.dlg.addEventListener('keydown', (evt) => this.#onKeyDown(evt));
    }

    /** Shows the popup; resolves with its value after the closing animation. */
    async show() {
        document.body.append(this.dlg);
        this.dlg.setAttribute('opening', '');
        this.dlg.showModal();
        fixToastrForDialogs();
        afterAnimation(this.dlg, () => {
            this.dlg.removeAttribute('opening');
            this.onOpen?.(this);
        });
        this.#promise = new Promise((resolve) => { this.#resolve = resolve; });
        return this.#promise;
    }

    /** Focuses (or, before showing, marks for autofocus) the popup's main control. */
    setAutoFocus({ applyAutoFocus = false } = {}) {
        let control = this.dlg.querySelector('[autofocus]');
        if (!control) {
            control = this.type === POPUP_TYPE.INPUT
                ? this.mainInput
                : this.buttonControls.querySelector(`[data-result="${this.defaultResult}"]`);
        }
        if (!(control instanceof HTMLElement)) return;
        if (applyAutoFocus) {
            control.setAttribute('autofocus', '');
            control.tabIndex = 0;
        } else {
            control.focus();
        }
    }

    /**
     * Completes the popup with a result. The value is the result, except
     * for INPUT (the text for results ≥ 1, false for 0 and other results,
     * null for CANCELLED) and CROP (a data URL, or null). onClosing vetoes
     * with any falsy return: the popup stays open, value/result/inputResults
     * are cleared and this returns undefined.
     * @param {number|null} result
     */
    async complete(result) {
        if (this.#hiding) return this.#promise;
        let value = result;
        if (this.type === POPUP_TYPE.INPUT) {
            if (result >= POPUP_RESULT.AFFIRMATIVE) value = this.mainInput.value;
            else if (result === POPUP_RESULT.CANCELLED) value = null;
            else value = false;
        }
        if (this.type === POPUP_TYPE.CROP) {
            value = result >= POPUP_RESULT.AFFIRMATIVE ? this.#croppedImage() : null;
        }
        if (this.customInputs?.length) {
            this.inputResults = new Map(this.customInputs.filter((i) => i?.id).map((input) => {
                const control = /** @type {HTMLInputElement} */ (this.dlg.querySelector('#' + CSS.escape(input.id)));
                const type = input.type ?? 'checkbox';
                return [input.id, type === 'checkbox' ? Boolean(control?.checked) : String(control?.value ?? '')];
            }));
        }
        this.value = value;
        this.result = result;

        if (this.onClosing) {
            const shouldClose = await this.onClosing(this);
            if (!shouldClose) {
                this.value = undefined;
                this.result = undefined;
                this.inputResults = undefined;
                return undefined;
            }
        }
        Popup.util.lastResult = { value, result, inputResults: this.inputResults };
        this.#hide();
        return this.#promise;
    }

    completeAffirmative() { return this.complete(POPUP_RESULT.AFFIRMATIVE); }
    completeNegative() { return this.complete(POPUP_RESULT.NEGATIVE); }
    completeCancelled() { return this.complete(POPUP_RESULT.CANCELLED); }

    #hide() {
        this.#hiding = true;
        this.dlg.setAttribute('closing', '');
        fixToastrForDialogs();
        afterAnimation(this.dlg, async () => {
            this.#closingByUs = true;
            this.dlg.close();
            try {
                await this.onClose?.(this);
            } finally {
                this.dlg.remove();
                const i = Popup.util.popups.indexOf(this);
                if (i >= 0) Popup.util.popups.splice(i, 1);
                const below = Popup.util.popups.find((p) => p.dlg === document.activeElement?.closest('.popup'));
                if (below) {
                    if (below.lastFocus) below.lastFocus.focus();
                    else below.setAutoFocus();
                }
                this.#resolve?.(this.value);
            }
        });
    }

    #escape() {
        if (this.#allowEscapeClose) {
            this.complete(POPUP_RESULT.CANCELLED);
            return;
        }
        const now = Date.now();
        const twice = now - this.#lastEscape < DOUBLE_ESCAPE_MS;
        this.#lastEscape = twice ? 0 : now;
        if (!twice) return;
        // When the browser is closing the dialog (an Escape it would not
        // let us cancel), the close listener re-opens it, which would put
        // it above a confirm opened now: offer the force-close after that.
        if (this.#browserClosing) this.#forceClosePending = true;
        else this.#offerForceClose();
    }

    #offerForceClose() {
        this.#forceClosePending = false;
        Popup.show.confirm('Force-close this popup?', 'It does not close with Escape. Close it anyway?')
            .then((answer) => {
                if (answer === POPUP_RESULT.AFFIRMATIVE) this.complete(POPUP_RESULT.CANCELLED);
            });
    }

    #onKeyDown(evt) {
        if (evt.key !== 'Enter' || evt.altKey || evt.shiftKey || evt.isComposing) return;
        const active = document.activeElement;
        // Only the topmost popup, and only from a result control.
        if (this.dlg !== active?.closest('.popup')) return;
        if (!active.closest('.result-control')) return;
        const field = active.closest('textarea') ?? active.closest('input[type="text"]');
        if (field && !evt.ctrlKey && this.mainInput.rows > 1) return;
        evt.preventDefault();
        evt.stopPropagation();
        this.complete(Number(active.getAttribute('data-result') ?? this.defaultResult));
    }

    #addCustomButton(entry, index) {
        const button = typeof entry === 'string' ? { text: entry, result: index + 2 } : entry;
        const el = document.createElement('div');
        el.classList.add('menu_button', 'popup-button-custom', 'result-control');
        const extra = button.classes ?? [];
        el.classList.add(...(Array.isArray(extra) ? extra : String(extra).split(/\s+/)).filter(Boolean));
        el.dataset.result = String(button.result);
        el.tabIndex = 0;
        if (button.icon) {
            el.classList.add('menu_button_icon');
            const icon = document.createElement('i');
            const name = String(button.icon);
            icon.className = 'fa-solid ' + (name.startsWith('fa-') ? name : 'fa-' + name);
            const text = document.createElement('span');
            text.textContent = button.text;
            text.dataset.i18n = button.text;
            el.append(icon, text);
        } else {
            el.textContent = button.text;
            el.dataset.i18n = button.text;
        }
        if (button.tooltip) el.title = button.tooltip;
        if (button.appendAtEnd) this.buttonControls.appendChild(el);
        else this.buttonControls.insertBefore(el, this.okButton);
        if (typeof button.action === 'function') el.addEventListener('click', button.action);
    }

    #addCustomInput(input) {
        if (!input?.id || typeof input.id !== 'string') {
            console.warn('Given custom input does not have a valid id set');
            return;
        }
        const type = input.type ?? 'checkbox';
        const label = document.createElement('label');
        label.setAttribute('for', input.id);
        const text = document.createElement('span');
        text.textContent = input.label;
        text.dataset.i18n = input.label;
        if (type === 'checkbox') {
            label.classList.add('checkbox_label', 'justifyCenter');
            const box = document.createElement('input');
            box.type = 'checkbox';
            box.id = input.id;
            box.checked = Boolean(input.defaultState ?? false);
            box.disabled = Boolean(input.disabled);
            label.append(box, text);
            if (input.tooltip) {
                const tip = document.createElement('div');
                tip.classList.add('fa-solid', 'fa-circle-info', 'opacity50p');
                tip.title = input.tooltip;
                label.append(tip);
            }
        } else if (type === 'text' || type === 'number' || type === 'textarea') {
            label.classList.add('text_label', 'justifyCenter');
            const field = document.createElement(type === 'textarea' ? 'textarea' : 'input');
            field.classList.add('text_pole', 'result-control');
            field.id = input.id;
            if (field instanceof HTMLInputElement) {
                field.type = type;
                for (const k of ['min', 'max', 'step']) if (input[k] != null) field.setAttribute(k, String(input[k]));
            } else {
                field.rows = input.rows ?? 2;
            }
            field.value = String(input.defaultState ?? '');
            field.placeholder = input.tooltip ?? '';
            field.disabled = Boolean(input.disabled);
            label.append(text, field);
        } else {
            console.warn('Unknown custom input type.', input);
            return;
        }
        this.inputControls.appendChild(label);
    }

    #croppedImage() {
        const img = this.cropImage;
        if (!img.naturalWidth) return null;
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        canvas.getContext('2d').drawImage(img, 0, 0);
        return canvas.toDataURL('image/jpeg');
    }

    /** Popup.show.input / .confirm / .text (notes §3.2). */
    static show = {
        async input(header, text, defaultValue = '', options = {}) {
            const value = await new Popup(withHeader(header, text), POPUP_TYPE.INPUT, defaultValue, options).show();
            if (value === '') return '';
            return value ? String(value) : null;
        },
        async confirm(header, text, options = {}) {
            return numeric(await new Popup(withHeader(header, text), POPUP_TYPE.CONFIRM, null, options).show(), 'CONFIRM');
        },
        async text(header, text, options = {}) {
            return numeric(await new Popup(withHeader(header, text), POPUP_TYPE.TEXT, null, options).show(), 'TEXT');
        },
    };

    static util = {
        /** @type {Popup[]} every popup constructed and not yet closed */
        popups: [],
        /** @type {{value: any, result: number|null, inputResults?: Map<string, string|boolean>}|null} */
        lastResult: null,
        isPopupOpen() {
            return Popup.util.popups.some((p) => p.dlg.hasAttribute('open'));
        },
        getTopmostModalLayer,
    };
}

function withHeader(header, text) {
    return header ? `<h3>${header}</h3>${text ?? ''}` : text;
}

function numeric(result, type) {
    if (typeof result === 'string' || typeof result === 'boolean') {
        throw new Error(`Invalid popup result. ${type} popups only support numbers, or null. Result: ${result}`);
    }
    return result;
}

/** `new Popup(content, type, inputValue, options).show()`. */
export function callGenericPopup(content, type, inputValue = '', popupOptions = {}) {
    return new Popup(content, type, inputValue, popupOptions).show();
}

/** The topmost open (not closing) dialog, else document.body. */
export function getTopmostModalLayer() {
    const open = [...document.querySelectorAll('dialog[open]:not([closing])')];
    return open.at(-1) ?? document.body;
}

/**
 * Keeps toastr's container inside the topmost open dialog, so toasts show
 * above the modal backdrop, and moves it back when the last one closes.
 */
export function fixToastrForDialogs() {
    const dlg = [...document.querySelectorAll('dialog[open]:not([closing])')].at(-1);
    let container = document.getElementById('toast-container');
    const existed = Boolean(container);
    if (!container) {
        container = document.createElement('div');
        container.id = 'toast-container';
        const position = globalThis.toastr?.options?.positionClass;
        if (position) container.classList.add(position);
    }
    if (dlg && !dlg.contains(container)) {
        dlg.appendChild(container);
        return;
    }
    if (!dlg && existed) {
        if (!container.childNodes.length) container.remove();
        else document.body.appendChild(container);
    }
}

/** Runs callback once el's current animation ends (at most 500 ms), or now if it has none. */
function afterAnimation(el, callback) {
    const longest = Math.max(0, ...getComputedStyle(el).animationDuration.split(',').map(toMs));
    if (!longest) {
        callback();
        return;
    }
    let done = false;
    const finish = () => {
        if (done) return;
        done = true;
        el.removeEventListener('animationend', finish);
        callback();
    };
    el.addEventListener('animationend', finish);
    setTimeout(finish, Math.min(longest + 50, MAX_ANIMATION_MS));
}

function toMs(duration) {
    const v = parseFloat(duration);
    if (!Number.isFinite(v)) return 0;
    return duration.trim().endsWith('ms') ? v : v * 1000;
}
