// The page's drawers. The open/close of an extension's inline drawer is
// not the extension's: SillyTavern's script.js has one delegated click
// handler on .inline-drawer-toggle, reproduced here as it behaves there
// (it flips every icon and slides every content inside the nearest
// .inline-drawer, nested ones included, and ignores clicks on a
// .text_pole). The top-bar drawer opens and closes the Extensions panel.

const $ = globalThis.jQuery;

export function initInlineDrawers() {
    $(document).on('click', '.inline-drawer-toggle', function (e) {
        if ($(e.target).hasClass('text_pole')) return;
        const drawer = $(this).closest('.inline-drawer');
        const icon = drawer.find('.inline-drawer-icon');
        const content = drawer.find('.inline-drawer-content');
        icon.toggleClass('down up');
        icon.toggleClass('fa-circle-chevron-down fa-circle-chevron-up');
        content.stop().slideToggle({ complete: () => $(this).css('height', '') });
        drawer[0]?.dispatchEvent(new CustomEvent('inline-drawer-toggle', { bubbles: true }));
    });
}

export function initTopDrawers() {
    $(document).on('click', '.drawer-toggle', function () {
        const icon = $(this).find('.drawer-icon');
        const content = $(this).closest('.drawer').find('.drawer-content').first();
        const open = !content.hasClass('openDrawer');
        content.toggleClass('openDrawer', open).toggleClass('closedDrawer', !open);
        icon.toggleClass('openIcon', open).toggleClass('closedIcon', !open);
        $(this).attr('aria-expanded', String(open));
    });
}
