-- taskdsl.lua: Neovim configuration for the taskdsl language server (Neovim 0.7 and later).
--
-- Use it from your init.lua (options are optional, see below):
--
--   vim.g.taskdsl = { python = '/path/to/venv/bin/python' }
--   dofile('/path/to/taskdsl/editors/nvim/taskdsl.lua')      -- or :source it
--
-- or copy it to ~/.config/nvim/lua/taskdsl.lua and `require('taskdsl').setup({ python = ... })`.
--
-- What it does:
--   * files named *.task.xml and *.test.xml (test files) get the filetype `taskxml` (highlighted
--     as XML), so the server checks both;
--   * Neovim 0.11+: vim.lsp.config('taskdsl', …) + vim.lsp.enable('taskdsl');
--     Neovim 0.7–0.10: a FileType autocmd starts the server (vim.lsp.start on 0.8+,
--     vim.lsp.start_client + vim.lsp.buf_attach_client on 0.7) and reuses one client per root;
--   * the server is `<python> -m taskdsl serve` (stdio); settings reach it through
--     workspace/configuration, section `taskdsl`;
--   * with nvim-dap installed: the `taskdsl` debug adapter (`<python> -m taskdsl debug`) and two
--     configurations for taskxml buffers (:lua require('dap').continue() on a template); the plan
--     is shown and agreed to before a session that runs scripts or paid models. Load nvim-dap first,
--     or call require('taskdsl').setup_dap() after it;
--   * :TaskdslRun [name=value …] runs the template of the current buffer (server command
--     taskdsl.runTask), asking for missing inputs (vim.ui.input); in a library file it first asks
--     which template or named task to run (vim.ui.select).
--
-- Options (vim.g.taskdsl or setup{}):
--   python    interpreter with taskdsl installed (default: $VIRTUAL_ENV/bin/python, else python3)
--   cmd       full server command, overrides python (e.g. { 'taskdsl', 'serve' })
--   settings  the `taskdsl` settings (SPEC §8), e.g.
--             { model = 'gpt-4o-mini', globals = { 'today' }, run = { allowScripts = false },
--               libraryPaths = { '~/templates' }, debounce = 200 }
--   root_markers  files that mark the workspace root: the nearest folder upward holding one
--                 (default { 'taskdsl.toml', 'pyproject.toml', '.git', '.taskdsl' })
--   on_attach function(client, bufnr) for your keymaps

local M = {}

local defaults = {
  python = nil,
  cmd = nil,
  settings = {},
  root_markers = { 'taskdsl.toml', 'pyproject.toml', '.git', '.taskdsl' },
  on_attach = nil,
}

local function default_python()
  local venv = os.getenv('VIRTUAL_ENV')
  if venv and vim.fn.executable(venv .. '/bin/python') == 1 then
    return venv .. '/bin/python'
  end
  return 'python3'
end

local function find_root(fname, markers)
  -- the nearest folder upward holding any marker, as taskdsl itself finds the project (a taskdsl.toml
  -- below a git root is its own project): not the first marker found anywhere above
  local dir = vim.fn.fnamemodify(fname, ':p:h')
  local here = dir
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(here .. '/' .. marker) then
        return here
      end
    end
    local parent = vim.fn.fnamemodify(here, ':h')
    if parent == here then
      return dir
    end
    here = parent
  end
end

-- Asking the user: vim.ui.input / vim.ui.select (which UI plugins replace), vim.fn.input as a
-- last resort.
local function ask(prompt, done)
  if vim.ui and vim.ui.input then
    vim.ui.input({ prompt = prompt }, done)
  else
    done(vim.fn.input(prompt))
  end
end

local function choose(prompt, items, done)
  if vim.ui and vim.ui.select then
    vim.ui.select(items, { prompt = prompt }, done)
  else
    local lines = { prompt }
    for i, item in ipairs(items) do table.insert(lines, i .. '. ' .. item) end
    done(items[vim.fn.inputlist(lines)])
  end
end

-- Why a run did not happen, from the server's answer: its structured error (`details.missing`:
-- inputs without a value; `details.tasks`: a library's entries to pick from) or its message.
local function run_problem(err, result)
  local problem
  if err then
    problem = type(err.data) == 'table' and err.data or { message = err.message or vim.inspect(err) }
  elseif type(result) == 'table' and type(result.status) == 'string' and result.status:match('FAIL') then
    problem = type(result.error) == 'table' and result.error or { message = tostring(result.error or 'failed') }
  end
  if not problem then return nil end
  local details = type(problem.details) == 'table' and problem.details or {}
  local missing = type(details.missing) == 'table' and details.missing or {}
  if #missing == 0 and type(problem.message) == 'string' then -- an older server: read the message
    local name = problem.message:match("input ['\"`]([%a_][%w_]*)['\"`] has no value")
    if name then missing = { name } end
  end
  local tasks = problem.reason == 'no_entry' and type(details.tasks) == 'table' and details.tasks or {}
  return { message = problem.message or vim.inspect(problem), missing = missing, tasks = tasks }
end

-- :TaskdslRun [name=value …] — workspace/executeCommand taskdsl.runTask(uri, task, inputs) on the
-- current buffer. Inputs the server reports missing are asked for, one by one; for a library
-- file the entry to run (a template or named task) is picked from the ones it defines.
local function run_task(args)
  local bufnr = vim.api.nvim_get_current_buf()
  local client
  local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(attached) do
    if c.name == 'taskdsl' then client = c end
  end
  if not client then
    vim.notify('taskdsl: no language server attached to this buffer', vim.log.levels.ERROR)
    return
  end
  local inputs = vim.empty_dict()
  for _, kv in ipairs(args or {}) do
    local k, v = kv:match('^([%w_]+)=(.*)$')
    if k then inputs[k] = v end
  end
  local uri = vim.uri_from_bufnr(bufnr)
  local asked, task = {}, vim.NIL
  local attempt

  local function ask_missing(names, i)
    if i > #names then return attempt() end
    ask('taskdsl input ' .. names[i] .. ': ', function(value)
      if value == nil then
        vim.notify('taskdsl: run cancelled (no value for ' .. names[i] .. ')', vim.log.levels.WARN)
        return
      end
      inputs[names[i]] = value
      ask_missing(names, i + 1)
    end)
  end

  attempt = function()
    client.request('workspace/executeCommand',
      { command = 'taskdsl.runTask', arguments = { uri, task, inputs } },
      function(err, result)
        local problem = run_problem(err, result)
        if problem and task == vim.NIL and #problem.tasks > 0 then
          return choose('taskdsl: run which entry?', problem.tasks, function(choice)
            if not choice then
              vim.notify('taskdsl: run cancelled', vim.log.levels.WARN)
              return
            end
            task = choice
            attempt()
          end)
        end
        local fresh = {}
        for _, name in ipairs(problem and problem.missing or {}) do
          if not asked[name] then
            asked[name] = true
            table.insert(fresh, name)
          end
        end
        if #fresh > 0 then
          return ask_missing(fresh, 1)
        end
        if problem then
          vim.notify('taskdsl: run failed: ' .. problem.message, vim.log.levels.ERROR)
        else
          local content = type(result) == 'table' and (result.content or vim.inspect(result)) or tostring(result)
          vim.notify('taskdsl: run finished\n' .. tostring(content), vim.log.levels.INFO)
        end
      end, bufnr)
  end
  attempt()
end

-- The taskdsl client of the buffer, else any running one (a request needs no particular file).
local function taskdsl_client(bufnr)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients -- 0.7 ignores the filter: check the name
  local any
  for _, c in pairs(get({ name = 'taskdsl' })) do
    if c.name == 'taskdsl' then
      if vim.lsp.buf_is_attached(bufnr, c.id) then return c end
      any = any or c
    end
  end
  return any
end

-- :TaskdslNew {text} — workspace/executeCommand taskdsl.newTask {text}: a library template that
-- fits, else a task the model writes, checked and repaired by the server. The checked task opens
-- in a new buffer (filetype taskxml, no name: :w name.task.xml saves it). Nothing runs.
local function new_task(text)
  local client = taskdsl_client(vim.api.nvim_get_current_buf())
  if not client then
    vim.notify('taskdsl: no taskdsl language server runs: open a *.task.xml file first', vim.log.levels.ERROR)
    return
  end
  if not text or text:match('^%s*$') then
    vim.notify('taskdsl: say in words what the task should do (:TaskdslNew count the words of a text)',
      vim.log.levels.ERROR)
    return
  end
  vim.notify('taskdsl: writing a task…', vim.log.levels.INFO)
  client.request('workspace/executeCommand', { command = 'taskdsl.newTask', arguments = { { text = text } } },
    function(err, result)
      if err or type(result) ~= 'table' or type(result.xml) ~= 'string' then
        local problem = err and (err.message or vim.inspect(err))
          or (type(result) == 'table' and type(result.error) == 'table' and result.error.message)
          or 'the server gave no task'
        vim.notify('taskdsl: no task: ' .. tostring(problem), vim.log.levels.ERROR)
        return
      end
      local buf = vim.api.nvim_create_buf(true, false)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.xml:gsub('\n$', ''), '\n', { plain = true }))
      vim.api.nvim_set_current_buf(buf)
      vim.bo[buf].filetype = 'taskxml'
      vim.bo[buf].modified = false
      local origin = result.source == 'library' and type(result.match) == 'table'
        and ('uses the template ' .. tostring(result.match.name))
        or ('written by ' .. tostring(result.model)
          .. ((tonumber(result.rounds) or 1) > 1 and (' and repaired in ' .. (result.rounds - 1) .. ' round(s)') or ''))
      vim.notify('taskdsl: the new task ' .. origin .. '; :w name.task.xml saves it', vim.log.levels.INFO)
    end)
end
M.new_task = new_task

-- The debugger (nvim-dap): `<python> -m taskdsl debug` speaks the Debug Adapter Protocol over stdio.
-- Before a session starts, the plan it would run is shown when it runs shell commands or calls a model
-- that may cost money (`taskdsl debug --plan`), and only the plan agreed to runs (its digest goes into
-- the launch as `agreedPlan`; any `agreedPlan` a configuration carries is dropped first).
local function agree_to_plan(python, config, on_config)
  local launch = vim.deepcopy(config)
  launch.agreedPlan = nil
  local out = vim.fn.system({ python, '-m', 'taskdsl', 'debug', '--plan' }, vim.fn.json_encode(launch))
  local ok, answer = pcall(vim.fn.json_decode, out)
  if not ok or type(answer) ~= 'table' then
    vim.notify('taskdsl debug --plan failed: ' .. out, vim.log.levels.ERROR)
    return
  end
  if answer.error then
    vim.notify('taskdsl: cannot debug: ' .. answer.error, vim.log.levels.ERROR)
    return
  end
  if answer.reasons and #answer.reasons > 0 then
    if vim.fn.confirm(answer.plan .. '\nDebug it?', '&Debug\n&Cancel', 2) ~= 1 then
      return
    end
    launch.agreedPlan = answer.digest
  end
  on_config(launch)
end

function M.setup_dap(user)
  local ok, dap = pcall(require, 'dap')
  if not ok then
    return false
  end
  local opts = vim.tbl_deep_extend('force', defaults, user or {})
  local python = opts.python or default_python()
  dap.adapters.taskdsl = {
    type = 'executable',
    command = python,
    args = { '-m', 'taskdsl', 'debug' },
    enrich_config = function(config, on_config) agree_to_plan(python, config, on_config) end,
  }
  dap.configurations.taskxml = {
    { type = 'taskdsl', request = 'launch', name = 'Debug this template', program = '${file}', stopOnEntry = true },
    {
      type = 'taskdsl', request = 'launch', name = 'Debug this template with inputs and a model', program = '${file}',
      inputs = function()
        local inputs = {}
        for _, pair in ipairs(vim.split(vim.fn.input('inputs (name=value …): '), ' ', { trimempty = true })) do
          local name, value = pair:match('^([%w_]+)=(.*)$')
          if name then inputs[name] = value end
        end
        return inputs
      end,
      model = function() return vim.fn.input('model: ', 'taskdsl/echo') end,
    },
  }
  return true
end

function M.setup(user)
  local opts = vim.tbl_deep_extend('force', defaults, user or {})
  local cmd = opts.cmd or { opts.python or default_python(), '-m', 'taskdsl', 'serve' }
  local settings = { taskdsl = opts.settings or {} }
  -- :TaskdslRun asks for a run's missing inputs itself: the server answers without an error toast
  local init_options = { taskdsl = opts.settings or {}, client = { promptsForMissingInputs = true } }
  local user_on_attach = opts.on_attach
  local function on_attach(client, bufnr)
    -- completion with <C-x><C-o> on every version (0.7 does not set it by itself)
    if vim.bo[bufnr].omnifunc == '' then
      vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
    end
    if user_on_attach then user_on_attach(client, bufnr) end
  end

  -- filetype: *.task.xml (templates) and *.test.xml (test files) are `taskxml`, shown with XML syntax
  local group = vim.api.nvim_create_augroup('taskdsl', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = { '*.task.xml', '*.test.xml' },
    callback = function(ev) vim.bo[ev.buf].filetype = 'taskxml' end,
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'taskxml',
    callback = function(ev)
      vim.bo[ev.buf].syntax = 'xml'
      vim.bo[ev.buf].commentstring = '<!-- %s -->'
    end,
  })
  if vim.treesitter and vim.treesitter.language and vim.treesitter.language.register then
    pcall(vim.treesitter.language.register, 'xml', 'taskxml')
  end

  if vim.lsp.config and vim.lsp.enable then
    -- Neovim 0.11+
    vim.lsp.config('taskdsl', {
      cmd = cmd,
      filetypes = { 'taskxml' },
      -- the nearest folder holding any marker (a flat root_markers list would be tried marker by marker)
      root_dir = function(bufnr, on_dir)
        on_dir(find_root(vim.api.nvim_buf_get_name(bufnr), opts.root_markers))
      end,
      workspace_required = false,
      settings = settings,
      init_options = init_options,
      on_attach = on_attach,
    })
    vim.lsp.enable('taskdsl')
  else
    -- Neovim 0.7–0.10
    local clients = {} -- root_dir -> client id (0.7 has no vim.lsp.start to reuse clients)
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = 'taskxml',
      callback = function(ev)
        local bufnr = ev.buf
        local root = find_root(vim.api.nvim_buf_get_name(bufnr), opts.root_markers)
        local config = {
          name = 'taskdsl',
          cmd = cmd,
          root_dir = root,
          settings = settings,
          init_options = init_options,
          on_attach = on_attach,
        }
        if vim.lsp.start then -- 0.8+
          vim.lsp.start(config, { bufnr = bufnr })
          return
        end
        local id = clients[root]
        if not id or not vim.lsp.get_client_by_id(id) then
          id = vim.lsp.start_client(config)
          clients[root] = id
        end
        if id then
          vim.lsp.buf_attach_client(bufnr, id)
        end
      end,
    })
  end

  pcall(vim.api.nvim_del_user_command, 'TaskdslRun')
  vim.api.nvim_create_user_command('TaskdslRun', function(c) run_task(c.fargs) end,
    { nargs = '*', desc = 'Run the taskdsl template of this buffer (name=value inputs)' })
  pcall(vim.api.nvim_del_user_command, 'TaskdslNew')
  vim.api.nvim_create_user_command('TaskdslNew', function(c) new_task(c.args) end,
    { nargs = '+', desc = 'A new taskdsl task from a description in plain words (checked, not run)' })
  M.setup_dap(user) -- when nvim-dap is installed
  return M
end

-- Sourced directly (dofile / :source / :luafile): set up with vim.g.taskdsl.
-- Loaded with require('taskdsl'): the caller calls setup().
if ... ~= 'taskdsl' then
  M.setup(vim.g.taskdsl)
end

return M
