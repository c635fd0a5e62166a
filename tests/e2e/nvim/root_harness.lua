-- tests/e2e/test_nvim_root.py: open $TASKDSL_E2E_FILE with editors/nvim/taskdsl.lua and write the root the
-- server was started with (its client's root_dir) to $TASKDSL_E2E_OUT.
vim.g.taskdsl = { python = os.getenv('TASKDSL_E2E_PYTHON') }
dofile(assert(os.getenv('TASKDSL_E2E_CONFIG')))
local out = assert(os.getenv('TASKDSL_E2E_OUT'))
vim.cmd('edit ' .. vim.fn.fnameescape(assert(os.getenv('TASKDSL_E2E_FILE'))))
local clients = {}
vim.wait(60000, function()
  clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
  return #clients > 0
end, 50)
vim.fn.writefile({ #clients > 0 and clients[1].config.root_dir or 'NO CLIENT' }, out)
vim.cmd('qall!')
