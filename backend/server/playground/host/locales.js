// The host page's own strings (SillyTavern calls these the core locale
// data). Extensions' manifest i18n never overrides them. English needs no
// table: a missing translation shows the key's text.

const zhCN = {
    'Extensions': '扩展',
    'Language': '语言',
    'Add the demo server': '添加演示服务器',
    'Add the sign-in demo': '添加需要登录的演示服务器',
    'ttmcp playground': 'ttmcp 试验场',
    'playground-intro': '由 ttmcp 后端提供的类 SillyTavern 页面。MCP 面板就是 mcp-manager 扩展，按 SillyTavern 的方式从它的清单加载。',
    'playground-closed': '打开“扩展”（上方的方块图标）来管理你的 MCP 服务器。',
    'Chat with': '聊天对象',
    'No chat': '无聊天',
    'playground-chat': '选一个角色，再用输入框旁的魔杖菜单为此聊天选择 MCP 工具集。',
    'playground-commands': '魔杖菜单还能把 MCP 资源附加到聊天；输入框可以运行快捷命令，例如 /mcp-prompt server=名称 name=提示词 | /setinput。',
    'Type a /command': '输入 /命令',
    'Demo server added': '已添加演示服务器',
    'It starts paused: turn it Active in the MCP panel to discover its tools.': '它以暂停状态开始：在 MCP 面板中将其设为启用，即可发现它的工具。',
    'The demo server is already in the list.': '演示服务器已在列表中。',
    'Could not add the demo server': '无法添加演示服务器',
    'OK': '确定',
    'Cancel': '取消',
    'popup-button-save': '保存',
    'popup-button-yes': '是',
    'popup-button-no': '否',
    'popup-button-cancel': '取消',
    'popup-button-import': '导入',
    'popup-button-crop': '裁剪',
    'Close popup': '关闭弹窗',
};

const zhTW = {
    'Extensions': '擴充功能',
    'Language': '語言',
    'Add the demo server': '新增示範伺服器',
    'Add the sign-in demo': '新增需要登入的示範伺服器',
    'ttmcp playground': 'ttmcp 試驗場',
    'playground-intro': '由 ttmcp 後端提供的類 SillyTavern 頁面。MCP 面板就是 mcp-manager 擴充功能，依 SillyTavern 的方式從它的資訊清單載入。',
    'playground-closed': '開啟「擴充功能」（上方的方塊圖示）來管理你的 MCP 伺服器。',
    'Chat with': '聊天對象',
    'No chat': '無聊天',
    'playground-chat': '選一個角色，再用輸入框旁的魔杖選單為此聊天選擇 MCP 工具集。',
    'playground-commands': '魔杖選單還能把 MCP 資源附加到聊天；輸入框可以執行斜線命令，例如 /mcp-prompt server=名稱 name=提示詞 | /setinput。',
    'Type a /command': '輸入 /命令',
    'Demo server added': '已新增示範伺服器',
    'It starts paused: turn it Active in the MCP panel to discover its tools.': '它以暫停狀態開始：在 MCP 面板中將其設為啟用，即可探索它的工具。',
    'The demo server is already in the list.': '示範伺服器已在清單中。',
    'Could not add the demo server': '無法新增示範伺服器',
    'OK': '確定',
    'Cancel': '取消',
    'popup-button-save': '儲存',
    'popup-button-yes': '是',
    'popup-button-no': '否',
    'popup-button-cancel': '取消',
    'popup-button-import': '匯入',
    'popup-button-crop': '裁切',
    'Close popup': '關閉彈出視窗',
};

/** @type {Record<string, Record<string, string>>} */
export const coreLocales = { 'zh-cn': zhCN, 'zh-tw': zhTW };
