;;; taskdsl.el --- taskdsl templates (*.task.xml) in Emacs with eglot  -*- lexical-binding: t -*-

;; Works with Emacs 28 + eglot 1.9 (Debian: apt-get install emacs elpa-eglot) and Emacs 29+
;; (eglot built in).
;;
;; Usage, in your init file:
;;
;;   (setq taskdsl-python "/path/to/venv/bin/python")   ; where `pip install taskdsl' went
;;   (load "/path/to/taskdsl/editors/emacs/taskdsl.el")
;;   ;; optional: settings sent to the server (workspace/configuration, section "taskdsl")
;;   (setq taskdsl-settings '(:model "gpt-4o-mini" :globals ["today"] :run (:allowScripts :json-false)))
;;
;; What it sets up:
;;   - `taskxml-mode', derived from `nxml-mode', for files named *.task.xml;
;;   - an `eglot-server-programs' entry starting "<python> -m taskdsl serve" (stdio) for it;
;;   - `eglot-ensure' in `taskxml-mode-hook' (unless `taskdsl-auto-start' is nil);
;;   - `taskdsl-run-task': runs the current template (server command taskdsl.runTask),
;;     asking for missing inputs in the minibuffer.
;; Diagnostics appear through Flymake (M-x flymake-show-buffer-diagnostics), hover through
;; ElDoc, completion through `completion-at-point', code actions with M-x eglot-code-actions.

;;; Code:

(require 'nxml-mode)
(require 'eglot)
(require 'subr-x)

(defgroup taskdsl nil
  "Support for taskdsl XML task templates."
  :group 'languages
  :prefix "taskdsl-")

(defcustom taskdsl-python
  (let ((venv (getenv "VIRTUAL_ENV")))
    (if (and venv (file-executable-p (expand-file-name "bin/python" venv)))
        (expand-file-name "bin/python" venv)
      "python3"))
  "Python interpreter with the taskdsl package installed; the server runs as PYTHON -m taskdsl serve."
  :type 'string)

(defcustom taskdsl-server-command nil
  "Full command line of the language server, overriding `taskdsl-python'.
For example (\"taskdsl\" \"serve\")."
  :type '(choice (const :tag "Use taskdsl-python" nil) (repeat string)))

(defcustom taskdsl-settings nil
  "Settings of the server (SPEC §8), a plist sent as the \"taskdsl\" configuration section.
Keys: :files :libraryPaths :globals :model :run (:allowScripts :timeout) :trace (:dir)
:debounce.  Use vectors for lists and :json-false for false, e.g.
  (:model \"gpt-4o-mini\" :libraryPaths [\"~/templates\"] :run (:allowScripts :json-false))"
  :type 'plist)

(defcustom taskdsl-auto-start t
  "Start eglot automatically in `taskxml-mode' buffers."
  :type 'boolean)

;;;###autoload
(define-derived-mode taskxml-mode nxml-mode "TaskXML"
  "Major mode for taskdsl templates: `nxml-mode' plus the taskdsl language server.")

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.task\\.xml\\'" . taskxml-mode))

(defun taskdsl-server-contact (&optional _interactive)
  "The command eglot runs for `taskxml-mode' buffers."
  (or taskdsl-server-command
      (list taskdsl-python "-m" "taskdsl" "serve")))

(add-to-list 'eglot-server-programs '(taskxml-mode . taskdsl-server-contact))

;; Answer workspace/configuration for the "taskdsl" section with `taskdsl-settings', unless
;; the user (or a .dir-locals.el) already set `eglot-workspace-configuration'.
(defun taskdsl--workspace-configuration (_server)
  (list :taskdsl (or taskdsl-settings (make-hash-table))))

(when (null (default-value 'eglot-workspace-configuration))
  (setq-default eglot-workspace-configuration #'taskdsl--workspace-configuration))

(defun taskdsl--maybe-start ()
  (when (and taskdsl-auto-start buffer-file-name)
    (eglot-ensure)))

(add-hook 'taskxml-mode-hook #'taskdsl--maybe-start)

(defun taskdsl--missing-input (text)
  "The input name an error TEXT of the server says is missing, or nil."
  (when (and text
             (or (string-match "[Mm]issing \\(?:required \\)?inputs?[: ]+['\"`‘“]?\\([A-Za-z_][A-Za-z0-9_]*\\)" text)
                 (string-match "inputs? ['\"`‘“]\\([A-Za-z_][A-Za-z0-9_]*\\)['\"`’”] \\(?:is \\)?\\(?:missing\\|required\\)" text)))
    (match-string 1 text)))

(defun taskdsl-run-task (&optional inputs)
  "Run the template of the current buffer through the server (command taskdsl.runTask).
INPUTS is an alist of (NAME . VALUE); the inputs the server reports missing are asked for."
  (interactive)
  (let ((server (eglot--current-server-or-lose))
        (uri (eglot--path-to-uri (buffer-file-name)))
        (inputs (copy-alist inputs))
        (asked nil)
        (result nil)
        (done nil))
    (while (not done)
      (condition-case err
          (progn
            (setq result
                  (jsonrpc-request server :workspace/executeCommand
                                   `(:command "taskdsl.runTask"
                                     :arguments [,uri nil
                                                 ,(if inputs
                                                      (let ((h (make-hash-table :test 'equal)))
                                                        (dolist (kv inputs h) (puthash (car kv) (cdr kv) h)))
                                                    (make-hash-table))])))
            (setq done t))
        (jsonrpc-error
         (let* ((text (format "%s" (cdr err)))
                (name (taskdsl--missing-input text)))
           (if (and name (not (member name asked)))
               (progn (push name asked)
                      (push (cons name (read-string (format "taskdsl input %s: " name))) inputs))
             (setq done t)
             (message "taskdsl: run failed: %s" text)
             (setq result nil))))))
    (when result
      (let ((content (if (listp result) (plist-get result :content) result)))
        (with-current-buffer (get-buffer-create "*taskdsl run*")
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert (format "%s" (or content result))))
          (display-buffer (current-buffer)))))
    result))

(provide 'taskdsl)
;;; taskdsl.el ends here
