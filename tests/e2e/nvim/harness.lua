-- Headless Neovim harness for tests/e2e/test_nvim.py: loads the user-facing config
-- editors/nvim/taskdsl.lua, opens the templates, and records what a user would see:
-- diagnostics, a hover and a completion list. Results go to $TASKDSL_E2E_OUT as JSON.
--
--   nvim --headless -i NONE --noplugin -u harness.lua
-- env: TASKDSL_E2E_CONFIG (taskdsl.lua), TASKDSL_E2E_PYTHON, TASKDSL_E2E_OUT,
--      TASKDSL_E2E_BAD (TD301 template), TASKDSL_E2E_TYPO (TD101 template),
--      TASKDSL_E2E_HELLO (a runnable template with the input `name`),
--      TASKDSL_E2E_TESTFILE (a *.test.xml file with TD501),
--      TASKDSL_E2E_MODEL (the `model` setting: :TaskdslNew's model; the templates run name their own)
local out_path = assert(os.getenv('TASKDSL_E2E_OUT'), 'TASKDSL_E2E_OUT')
local result = { steps = {}, messages = {} }
local t0 = vim.loop.hrtime()

local function ms() return math.floor((vim.loop.hrtime() - t0) / 1e6) end
local function step(name) table.insert(result.steps, { name = name, ms = ms() }) end

local function finish(code)
  result.total_ms = ms()
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd(code == 0 and 'qall!' or ('cquit ' .. code))
end

vim.g.taskdsl = {
  python = os.getenv('TASKDSL_E2E_PYTHON'),
  settings = { debounce = 50, model = os.getenv('TASKDSL_E2E_MODEL') },
}
dofile(assert(os.getenv('TASKDSL_E2E_CONFIG'), 'TASKDSL_E2E_CONFIG'))
-- which path of the config this Neovim takes: vim.lsp.config/enable (0.11+) or the FileType autocmd
local v = vim.version()
result.nvim_version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
result.config_api = (vim.lsp.config ~= nil and vim.lsp.enable ~= nil)

-- record server messages (a failing server usually says why)
local show = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx, config)
  table.insert(result.messages, params and params.message)
  return show(err, params, ctx, config)
end

local function taskdsl_client(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(clients) do
    if c.name == 'taskdsl' then return c end
  end
end

local function diagnostics_of(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(list, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      message = d.message, severity = d.severity, source = d.source or lsp.source,
      code = lsp.code or d.code,
    })
  end
  return list
end

local function open(path, key)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  local entry = { filetype = vim.bo[bufnr].filetype }
  result[key] = entry
  local attached = vim.wait(60000, function() return taskdsl_client(bufnr) ~= nil end, 20)
  entry.attached = attached
  if not attached then error('no taskdsl client attached to ' .. path) end
  local client = taskdsl_client(bufnr)
  -- wait until the server is initialized and has published for this buffer
  local ok = vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20)
  entry.diagnostics = diagnostics_of(bufnr)
  step('diagnostics ' .. key .. (ok and '' or ' (timeout)'))
  return bufnr, client
end

local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, 10000)
  if not responses then return { error = tostring(err) } end
  for _, r in pairs(responses) do
    if r.err then return { error = r.err } end
    return { result = r.result }
  end
  return { error = 'no response' }
end

local function run()
  local bad, client = open(os.getenv('TASKDSL_E2E_BAD'), 'bad')
  result.server_name = client.name
  result.capabilities = {
    hover = client.server_capabilities and client.server_capabilities.hoverProvider or
      (client.resolved_capabilities and client.resolved_capabilities.hover) or nil,
  }
  local uri = vim.uri_from_bufnr(bad)

  -- hover on the `fresh_context` element name (line 4, after "    <")
  local h = request(bad, 'textDocument/hover', { textDocument = { uri = uri }, position = { line = 4, character = 7 } })
  if h.result and h.result.contents then
    local lines = vim.lsp.util.convert_input_to_markdown_lines(h.result.contents)
    result.hover = table.concat(lines, '\n')
  else
    result.hover_error = h.error or 'empty hover'
  end
  step('hover')

  -- completion inside <task>: the user types "  <" on a new line before </task>
  vim.api.nvim_buf_set_lines(bad, 6, 6, false, { '  <' })
  local c = request(bad, 'textDocument/completion', {
    textDocument = { uri = uri }, position = { line = 6, character = 3 },
    context = { triggerKind = 2, triggerCharacter = '<' },
  })
  if c.result then
    local items = c.result.items or c.result
    result.completion = {}
    for _, item in ipairs(items) do table.insert(result.completion, item.label) end
  else
    result.completion_error = c.error
  end
  step('completion')
  vim.api.nvim_buf_set_lines(bad, 6, 7, false, {})

  open(os.getenv('TASKDSL_E2E_TYPO'), 'typo')
  -- a test file (*.test.xml) gets the filetype and the server too
  if os.getenv('TASKDSL_E2E_TESTFILE') then open(os.getenv('TASKDSL_E2E_TESTFILE'), 'testfile') end

  -- run the runnable template with the config's :TaskdslRun, giving its input on the command line
  local hello = os.getenv('TASKDSL_E2E_HELLO')
  if hello then
    vim.cmd('edit ' .. vim.fn.fnameescape(hello))
    local hb = vim.api.nvim_get_current_buf()
    vim.wait(60000, function() return taskdsl_client(hb) ~= nil end, 20)
    local notes = {}
    local notify = vim.notify
    vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
    vim.cmd('TaskdslRun name=World')
    local done = vim.wait(180000, function()
      for _, n in ipairs(notes) do
        if n.msg:match('^taskdsl: run ') then return true end
      end
      return false
    end, 50)
    result.run = { done = done, notes = notes }
    step('run')

    -- :TaskdslRun without the input: the config asks for it (vim.ui.input, answered as a user would)
    local prompts, picks = {}, {}
    local ui_input, ui_select = vim.ui.input, vim.ui.select
    local answers = { name = 'Prompted', who = 'Ada' }
    vim.ui.input = function(opts, on_confirm)
      table.insert(prompts, opts.prompt)
      on_confirm(answers[opts.prompt:match('input ([%w_]+)')])
    end
    vim.ui.select = function(items, opts, on_choice)
      table.insert(picks, { prompt = opts.prompt, items = items })
      on_choice(items[1])
    end
    local function run_until_done(command)
      notes = {}
      vim.cmd(command)
      return vim.wait(180000, function()
        for _, n in ipairs(notes) do
          if n.msg:match('^taskdsl: run ') then return true end
        end
        return false
      end, 50)
    end
    local prompted_done = run_until_done('TaskdslRun')
    result.run_prompted = { done = prompted_done, notes = notes, prompts = prompts }
    step('run prompted')

    -- a library file: the entry is picked, then its param asked for
    local lib = vim.fn.getcwd() .. '/greetings.task.xml'
    vim.fn.writefile({
      '<library>',
      '  <template name="greet" params="who">',
      '    <task><description>Greet {{who}} warmly</description><model>taskdsl/echo</model></task>',
      '  </template>',
      '  <template name="shout" params="text">',
      '    <task><description>Shout {{text}}</description><model>taskdsl/echo</model></task>',
      '  </template>',
      '</library>',
    }, lib)
    vim.cmd('edit ' .. vim.fn.fnameescape(lib))
    local lb = vim.api.nvim_get_current_buf()
    vim.wait(60000, function() return taskdsl_client(lb) ~= nil end, 20)
    prompts = {}
    local library_done = run_until_done('TaskdslRun')
    result.run_library = { done = library_done, notes = notes, prompts = prompts, picks = picks }
    step('run library')
    vim.ui.input, vim.ui.select = ui_input, ui_select

    -- :TaskdslNew: the server writes a checked task with the `model` setting, the config opens it
    -- in a new buffer and says where it came from
    notes = {}
    local before = vim.api.nvim_get_current_buf()
    vim.cmd('TaskdslNew write a haiku about autumn leaves')
    local new_done = vim.wait(180000, function()
      for _, n in ipairs(notes) do
        if n.msg:match('^taskdsl: the new task ') or n.msg:match('^taskdsl: no task') then return true end
      end
      return false
    end, 50)
    local nb = vim.api.nvim_get_current_buf()
    result.new_task = {
      done = new_done, notes = notes, new_buffer = nb ~= before, filetype = vim.bo[nb].filetype,
      name = vim.api.nvim_buf_get_name(nb), modified = vim.bo[nb].modified,
      text = table.concat(vim.api.nvim_buf_get_lines(nb, 0, -1, false), '\n'),
    }
    step('new task')
    vim.notify = notify
  end

  client.stop()
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 20)
  step('stopped')
  finish(0)
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true, -- so :edit below fires BufRead/FileType autocmds (the config's)
  callback = function()
    local ok, err = pcall(run)
    if not ok then
      result.error = tostring(err)
      finish(1)
    end
  end,
})
