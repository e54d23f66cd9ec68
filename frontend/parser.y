/* frontend/parser.y — the grammar of .te programs (a pure bison parser).
 *
 * The parser only builds the syntax tree (frontend/ast.h); names, types
 * and shapes are checked by sema.  Error recovery: a statement with a
 * syntax error is skipped up to the end of its line, a def, for or if whose
 * header is broken resumes at its '{', so one run reports several errors. */

%require "3.6"    /* parse.error detailed */
%define api.pure full
%define api.prefix {fe_yy}
%define api.token.prefix {TOK_}
%define api.location.type {fe_yyloc}
%define parse.error detailed
%locations
%param {void *scanner}
%parse-param {fe_parser *ctx}

%code requires {
#include "frontend/parse.h"

/* Locations carry byte offsets besides lines and columns. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                        \
    do {                                                                   \
        if (N) {                                                           \
            (Cur).first_line = YYRHSLOC(Rhs, 1).first_line;                \
            (Cur).first_column = YYRHSLOC(Rhs, 1).first_column;            \
            (Cur).first_off = YYRHSLOC(Rhs, 1).first_off;                  \
            (Cur).last_line = YYRHSLOC(Rhs, N).last_line;                  \
            (Cur).last_column = YYRHSLOC(Rhs, N).last_column;              \
            (Cur).last_off = YYRHSLOC(Rhs, N).last_off;                    \
        } else {                                                           \
            (Cur).first_line = (Cur).last_line = YYRHSLOC(Rhs, 0).last_line;   \
            (Cur).first_column = (Cur).last_column = YYRHSLOC(Rhs, 0).last_column; \
            (Cur).first_off = (Cur).last_off = YYRHSLOC(Rhs, 0).last_off;  \
        }                                                                  \
    } while (0)
}

%union {
    int64_t ival;
    double fval;
    char *str;
    ir_dtype dtype;
    fe_expr *expr;
    fe_stmt *stmt;
    fe_vec *vec;
    fe_type *type;
    fe_init init;
    fe_def *def;
    fe_arg *arg;
    fe_param *param;
    fe_output *output;
    fe_assign_op aop;
    fe_range *range;
}

%code {
#include <string.h>

int fe_yylex(FE_YYSTYPE *lval, FE_YYLTYPE *lloc, void *scanner);

static void fe_yyerror(FE_YYLTYPE *l, void *scanner, fe_parser *ctx, const char *msg)
{
    (void)scanner;
    diag_loc loc = {ctx->file->name, l->first_line, l->first_column};
    if (strcmp(msg, "memory exhausted") == 0) {
        /* The parser's stack is full: too much is pending at once (the
         * lexer has said so already when parentheses are the cause). */
        if (ctx->depth <= 1000)
            diag_error(ctx->d, loc, "%s", "expression nested too deeply for the parser (about "
                       "10000 operators and parentheses pending at once); compute parts of it "
                       "into temporaries");
        ctx->nerrors++;
        return;
    }
    const char *expecting = strstr(msg, ", expecting");
    if (expecting && (strstr(expecting, "']'") || strstr(expecting, "')'")) &&
        ctx->before_line && l->first_line > ctx->before_line) {
        /* A newline inside brackets continues the line, so a missing ']'
         * or ')' is only noticed at a later line: report it where the
         * bracket should have been closed. */
        diag_loc end = {ctx->file->name, ctx->before_line, ctx->before_col};
        diag_error(ctx->d, end, "%.*s (on line %d)%s", (int)(expecting - msg), msg, l->first_line,
                   expecting);
    } else {
        diag_error(ctx->d, loc, "%s", msg);
    }
    ctx->nerrors++;
}

#define A (ctx->arena)
#define SP(l) fe_span_of(ctx, (l))

/* The deepest expression accepted: every stage after the parser walks
 * expressions recursively, and a sum of thousands of terms would overflow
 * the stack.  Deeper ones are refused with a located error. */
#define FE_MAX_EXPR_DEPTH 1000

static int depth_of(const fe_expr *e) { return e ? e->depth : 0; }

/* Sets e's depth from its operands' (built before it); the error comes
 * once, at the node that first goes past the limit. */
static fe_expr *nest(fe_parser *ctx, fe_expr *e)
{
    int d = depth_of(e->a);
    d = depth_of(e->b) > d ? depth_of(e->b) : d;
    d = depth_of(e->c) > d ? depth_of(e->c) : d;
    d = depth_of(e->dflt) > d ? depth_of(e->dflt) : d;
    for (int i = 0; i < e->nidx; i++)
        d = depth_of(e->idx[i]) > d ? depth_of(e->idx[i]) : d;
    for (int i = 0; i < e->nargs; i++)
        d = depth_of(e->args[i].value) > d ? depth_of(e->args[i].value) : d;
    e->depth = d + 1;
    if (e->depth == FE_MAX_EXPR_DEPTH + 1) {
        diag_error(ctx->d, fe_loc(e->opspan), "expression nested more than %d levels deep; "
                   "compute parts of it into temporaries", FE_MAX_EXPR_DEPTH);
        ctx->nerrors++;
    }
    return e;
}

static fe_expr *binary(fe_parser *ctx, fe_op op, fe_expr *a, fe_expr *b, fe_yyloc opl)
{
    fe_expr *e = fe_expr_new(ctx->arena, FE_E_BINARY, fe_span_join(a->span, b->span));
    e->op = op;
    e->a = a;
    e->b = b;
    e->opspan = fe_span_of(ctx, opl);
    return nest(ctx, e);
}

static fe_expr *unary(fe_parser *ctx, fe_op op, fe_expr *a, fe_yyloc whole, fe_yyloc opl)
{
    fe_expr *e = fe_expr_new(ctx->arena, FE_E_UNARY, fe_span_of(ctx, whole));
    e->op = op;
    e->a = a;
    e->opspan = fe_span_of(ctx, opl);
    return nest(ctx, e);
}

static fe_expr *access(fe_parser *ctx, const char *name, fe_vec *idx, fe_yyloc l)
{
    fe_expr *e = fe_expr_new(ctx->arena, FE_E_ACCESS, fe_span_of(ctx, l));
    e->name = name;
    e->idx = (fe_expr **)idx->v;
    e->nidx = idx->n;
    return nest(ctx, e);
}

/* Marks the enclosing def's kind while statements are parsed. */
/* A name and its place (an element of `names`: one target of an
 * assignment of several results). */
static fe_output *fe_name_at(ir_arena *a, char *name, fe_span sp)
{
    fe_output *o = ir_alloc(a, sizeof *o);
    o->name = name;
    o->span = sp;
    return o;
}

/* Does an index statement of body define `name`? */
static bool defines_index(fe_stmt **body, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        fe_stmt *s = body[i];
        if ((s->kind == FE_S_INDEX && strcmp(s->name, name) == 0) ||
            defines_index(s->body, s->nbody, name) || defines_index(s->orelse, s->norelse, name))
            return true;
    }
    return false;
}

/* A view (of an input or a param) leaves a def a kernel; a view of a
 * tensor the def computes needs that tensor's storage, which only a stage
 * of its own gives, so it counts as a call. */
static void note_kind_in(fe_stmt **def_body, int ndef, fe_stmt **body, int n, bool *calls, bool *index)
{
    for (int i = 0; i < n; i++) {
        fe_stmt *s = body[i];
        if (s->kind == FE_S_INDEX) {
            *index = true;
        } else if (s->kind == FE_S_ASSIGN && s->value && s->value->kind == FE_E_CALL) {
            const fe_expr *x = s->value;
            bool view = fe_is_view_op(x->name) &&
                        !(x->nargs && x->args[0].value->kind == FE_E_NAME &&
                          defines_index(def_body, ndef, x->args[0].value->name));
            *calls |= !view;
        }
        note_kind_in(def_body, ndef, s->body, s->nbody, calls, index);
        note_kind_in(def_body, ndef, s->orelse, s->norelse, calls, index);
    }
}

static void note_kind(fe_stmt **body, int n, bool *calls, bool *index)
{
    note_kind_in(body, n, body, n, calls, index);
}
}

%token <str> IDENT "identifier"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token <str> STRING "string"
%token <dtype> DTYPE "dtype name"
%token NEWLINE "end of line"
%token ARROW "'->'" DOTDOT "'..'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='"
%token ANDAND "'&&'" OROR "'||'"
%token ADDEQ "'+='" MULEQ "'*='" MAXEQ "'max='" MINEQ "'min='"
%token DEF "'def'" LET "'let'" PARAM "'param'" INPUT "'input'" OUTPUT "'output'"
%token IMPORT "'import'" FOR "'for'" IN "'in'" IF "'if'" ELSE "'else'" AS "'as'"
%token UNIFORM "'uniform'" WHERE "'where'" STATE "'state'" ASSERT "'assert'"
%token SCHEDULE "'schedule'"
%token <str> SCHED_BODY "'{'"   /* a schedule's body, braces excluded (lexer.l) */

%type <expr> expr uexpr postfix
%type <vec> exprs exprs1 args args1 stmts params params1 block else_part where_opt ranges
%type <range> range
%type <stmt> stmt if_stmt
%type <type> type
%type <init> init_opt
%type <def> def
%type <arg> arg
%type <param> param
%type <output> output
%type <vec> outputs outputs1 names
%type <aop> assign_op
%type <str> as_opt

%right '?' ':'
%left OROR
%left ANDAND
%left EQ NE
%left '<' LE '>' GE
%left '+' '-'
%left '*' '/' '%'

%%

program:
    %empty
  | program stmt                { if ($2) fe_vec_push(A, ctx->stmts, $2); }
  ;

stmt:
    IMPORT STRING NEWLINE {
        $$ = fe_stmt_new(A, FE_S_IMPORT, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
    }
  | LET IDENT '=' expr NEWLINE {
        $$ = fe_stmt_new(A, FE_S_LET, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->value = $4;
    }
  | def NEWLINE {
        $$ = fe_stmt_new(A, FE_S_DEF, $1->span);
        $$->def = $1;
    }
  | INPUT IDENT ':' type init_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_INPUT, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->type = $4;
        $$->init = $5;
    }
  | PARAM IDENT ':' type init_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_PARAM, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->type = $4;
        $$->init = $5;
    }
  | STATE IDENT ':' type init_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_PARAM, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->type = $4;
        $$->init = $5;
        $$->state = true;
    }
  | OUTPUT IDENT as_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_OUTPUT, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->as = $3;
        $$->as_span = SP(@3);
    }
  | IDENT '[' exprs ']' assign_op expr where_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_INDEX, SP(@$));
        $$->name = $1;
        $$->name_span = SP(@1);
        $$->idx = (fe_expr **)$3->v;
        $$->nidx = $3->n;
        $$->op = $5;
        $$->op_span = SP(@5);
        $$->value = $6;
        $$->ranges = (fe_range **)$7->v;
        $$->nranges = $7->n;
    }
  | IDENT '=' expr as_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_ASSIGN, SP(@$));
        $$->name = $1;
        $$->name_span = SP(@1);
        $$->value = $3;
        $$->as = $4;
        $$->as_span = SP(@4);
    }
  | names '=' expr as_opt NEWLINE {
        $$ = fe_stmt_new(A, FE_S_ASSIGN, SP(@$));
        $$->nnames = $1->n;
        $$->names = ir_alloc(A, sizeof(char *) * (size_t)$1->n);
        $$->name_spans = ir_alloc(A, sizeof(fe_span) * (size_t)$1->n);
        for (int i = 0; i < $1->n; i++) {
            $$->names[i] = ((fe_output *)$1->v[i])->name;
            $$->name_spans[i] = ((fe_output *)$1->v[i])->span;
        }
        $$->name = $$->names[0];
        $$->name_span = $$->name_spans[0];
        $$->value = $3;
        $$->as = $4;
        $$->as_span = SP(@4);
    }
  | FOR IDENT IN expr DOTDOT expr block NEWLINE {
        $$ = fe_stmt_new(A, FE_S_FOR, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->lo = $4;
        $$->hi = $6;
        $$->body = (fe_stmt **)$7->v;
        $$->nbody = $7->n;
    }
  | ASSERT expr NEWLINE {
        $$ = fe_stmt_new(A, FE_S_ASSERT, SP(@$));
        $$->cond = $2;
    }
  | ASSERT expr ',' STRING NEWLINE {
        $$ = fe_stmt_new(A, FE_S_ASSERT, SP(@$));
        $$->cond = $2;
        $$->as = $4;
        $$->as_span = SP(@4);
    }
  | SCHEDULE IDENT SCHED_BODY NEWLINE {
        $$ = fe_stmt_new(A, FE_S_SCHEDULE, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->text = $3;
        $$->text_span = SP(@3);
    }
  | SCHEDULE STRING SCHED_BODY NEWLINE {
        $$ = fe_stmt_new(A, FE_S_SCHEDULE, SP(@$));
        $$->name = $2;
        $$->name_span = SP(@2);
        $$->sched_layer = true;
        $$->text = $3;
        $$->text_span = SP(@3);
    }
  | FOR error block NEWLINE     { $$ = NULL; }
  | if_stmt NEWLINE             { $$ = $1; }
  | error NEWLINE               { $$ = NULL; yyerrok; }
  ;

if_stmt:
    IF expr block else_part {
        $$ = fe_stmt_new(A, FE_S_IF, SP(@$));
        $$->cond = $2;
        $$->body = (fe_stmt **)$3->v;
        $$->nbody = $3->n;
        $$->orelse = (fe_stmt **)$4->v;
        $$->norelse = $4->n;
    }
  | IF error block else_part    { $$ = NULL; }
  ;

else_part:
    %empty                      { $$ = fe_vec_new(A); }
  | ELSE block                  { $$ = $2; }
  | ELSE if_stmt                { $$ = fe_vec_new(A); if ($2) fe_vec_push(A, $$, $2); }
  ;

block:
    '{' stmts '}'               { $$ = $2; }
  | '{' stmts error '}'         { $$ = $2; yyerrok; }   /* resync at the '}' */
  ;

stmts:
    %empty                      { $$ = fe_vec_new(A); }
  | stmts stmt                  { $$ = $1; if ($2) fe_vec_push(A, $$, $2); }
  ;

def:
    DEF IDENT '(' params ')' ARROW outputs block {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $2;
        $$->span = SP(@2);
        $$->params = ir_alloc(A, sizeof(fe_param) * (size_t)($4->n ? $4->n : 1));
        for (int i = 0; i < $4->n; i++)
            $$->params[i] = *(fe_param *)$4->v[i];
        $$->nparams = $4->n;
        $$->outs = ir_alloc(A, sizeof(fe_output) * (size_t)$7->n);
        for (int i = 0; i < $7->n; i++)
            $$->outs[i] = *(fe_output *)$7->v[i];
        $$->nouts = $7->n;
        $$->body = (fe_stmt **)$8->v;
        $$->nbody = $8->n;
        $$->body_span = SP(@8);
        note_kind($$->body, $$->nbody, &$$->has_calls, &$$->has_index);
    }
  | DEF error block {
        /* A broken header: the body is still parsed (for its errors), the
           def is dropped. */
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = NULL;
        $$->span = SP(@1);
    }
  ;

outputs:
    output                      { $$ = fe_vec_new(A); fe_vec_push(A, $$, $1); }
  | '(' outputs1 ')'            { $$ = $2; }
  ;

outputs1:
    output                      { $$ = fe_vec_new(A); fe_vec_push(A, $$, $1); }
  | outputs1 ',' output         { $$ = $1; fe_vec_push(A, $$, $3); }
  ;

output:
    IDENT {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $1;
        $$->span = SP(@1);
    }
  | IDENT ':' type {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $1;
        $$->span = SP(@1);
        $$->type = $3;
    }
  ;

names:
    IDENT ',' IDENT {
        $$ = fe_vec_new(A);
        fe_vec_push(A, $$, fe_name_at(A, $1, SP(@1)));
        fe_vec_push(A, $$, fe_name_at(A, $3, SP(@3)));
    }
  | names ',' IDENT             { $$ = $1; fe_vec_push(A, $$, fe_name_at(A, $3, SP(@3))); }
  ;

params:
    %empty                      { $$ = fe_vec_new(A); }
  | params1                     { $$ = $1; }
  | params1 ','                 { $$ = $1; }
  ;

params1:
    param                       { $$ = fe_vec_new(A); fe_vec_push(A, $$, $1); }
  | params1 ',' param           { $$ = $1; fe_vec_push(A, $$, $3); }
  ;

param:
    IDENT ':' type {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $1;
        $$->span = SP(@1);
        $$->type = $3;
    }
  | IDENT ':' type '=' expr {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $1;
        $$->span = SP(@1);
        $$->type = $3;
        $$->dflt = $5;
    }
  ;

type:
    DTYPE {
        $$ = ir_alloc(A, sizeof *$$);
        $$->kind = FE_T_TENSOR;
        $$->dtype = $1;
        $$->span = SP(@$);
    }
  | DTYPE '[' exprs ']' {
        $$ = ir_alloc(A, sizeof *$$);
        $$->kind = FE_T_TENSOR;
        $$->dtype = $1;
        $$->dims = (fe_expr **)$3->v;
        $$->ndims = $3->n;
        $$->span = SP(@$);
    }
  | IDENT {
        $$ = ir_alloc(A, sizeof *$$);
        $$->span = SP(@$);
        if (strcmp($1, "int") == 0) {
            $$->kind = FE_T_INT;
        } else if (strcmp($1, "float") == 0) {
            $$->kind = FE_T_FLOAT;
        } else {
            diag_error(ctx->d, fe_loc($$->span),
                       "unknown type '%s' (expected a dtype such as f32[...], or int or float)", $1);
            ctx->nerrors++;
            $$->kind = FE_T_INT;
        }
    }
  ;

init_opt:
    %empty                      { memset(&$$, 0, sizeof $$); }
  | '=' UNIFORM '(' expr ',' expr ')' {
        memset(&$$, 0, sizeof $$);
        $$.kind = FE_INIT_UNIFORM;
        $$.lo = $4;
        $$.hi = $6;
        $$.span = SP(@2);
    }
  | '=' expr {
        memset(&$$, 0, sizeof $$);
        $$.kind = FE_INIT_CONST;
        $$.lo = $2;
        $$.span = SP(@2);
    }
  ;

where_opt:
    %empty                      { $$ = fe_vec_new(A); }
  | WHERE ranges                { $$ = $2; }
  ;

ranges:
    range                       { $$ = fe_vec_new(A); fe_vec_push(A, $$, $1); }
  | ranges ',' range            { $$ = $1; fe_vec_push(A, $$, $3); }
  ;

range:
    IDENT IN expr DOTDOT expr {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $1;
        $$->name_span = SP(@1);
        $$->lo = $3;
        $$->hi = $5;
        $$->span = SP(@$);
    }
  ;

as_opt:
    %empty                      { $$ = NULL; }
  | AS STRING                   { $$ = $2; @$ = @2; }
  ;

assign_op:
    '='                         { $$ = FE_AS_SET; }
  | ADDEQ                       { $$ = FE_AS_ADD; }
  | MULEQ                       { $$ = FE_AS_MUL; }
  | MAXEQ                       { $$ = FE_AS_MAX; }
  | MINEQ                       { $$ = FE_AS_MIN; }
  ;

exprs:
    %empty                      { $$ = fe_vec_new(A); }
  | exprs1                      { $$ = $1; }
  ;

exprs1:
    expr                        { $$ = fe_vec_new(A); fe_vec_push(A, $$, $1); }
  | exprs1 ',' expr             { $$ = $1; fe_vec_push(A, $$, $3); }
  ;

expr:
    uexpr                       { $$ = $1; }
  | expr '+' expr               { $$ = binary(ctx, FE_OP_ADD, $1, $3, @2); }
  | expr '-' expr               { $$ = binary(ctx, FE_OP_SUB, $1, $3, @2); }
  | expr '*' expr               { $$ = binary(ctx, FE_OP_MUL, $1, $3, @2); }
  | expr '/' expr               { $$ = binary(ctx, FE_OP_DIV, $1, $3, @2); }
  | expr '%' expr               { $$ = binary(ctx, FE_OP_MOD, $1, $3, @2); }
  | expr EQ expr                { $$ = binary(ctx, FE_OP_EQ, $1, $3, @2); }
  | expr NE expr                { $$ = binary(ctx, FE_OP_NE, $1, $3, @2); }
  | expr '<' expr               { $$ = binary(ctx, FE_OP_LT, $1, $3, @2); }
  | expr LE expr                { $$ = binary(ctx, FE_OP_LE, $1, $3, @2); }
  | expr '>' expr               { $$ = binary(ctx, FE_OP_GT, $1, $3, @2); }
  | expr GE expr                { $$ = binary(ctx, FE_OP_GE, $1, $3, @2); }
  | expr ANDAND expr            { $$ = binary(ctx, FE_OP_AND, $1, $3, @2); }
  | expr OROR expr              { $$ = binary(ctx, FE_OP_OR, $1, $3, @2); }
  | expr '?' expr ':' expr {
        $$ = fe_expr_new(A, FE_E_COND, fe_span_join($1->span, $5->span));
        $$->c = $1;
        $$->a = $3;
        $$->b = $5;
        $$->opspan = SP(@2);
        nest(ctx, $$);
    }
  ;

uexpr:
    postfix                     { $$ = $1; }
  | '-' uexpr                   { $$ = unary(ctx, FE_OP_NEG, $2, @$, @1); }
  | '+' uexpr                   { $$ = $2; }
  | '!' uexpr                   { $$ = unary(ctx, FE_OP_NOT, $2, @$, @1); }
  ;

postfix:
    INT {
        $$ = fe_expr_new(A, FE_E_INT, SP(@$));
        $$->ival = $1;
    }
  | FLOAT {
        $$ = fe_expr_new(A, FE_E_FLOAT, SP(@$));
        $$->fval = $1;
    }
  | IDENT {
        $$ = fe_expr_new(A, FE_E_NAME, SP(@$));
        $$->name = $1;
    }
  | '(' expr ')' {
        $$ = $2;
        /* The span grows to the parentheses so quoted text stays balanced. */
        $$->span.off = SP(@1).off;
        $$->span.end = SP(@3).end;
        $$->span.line = SP(@1).line;
        $$->span.col = SP(@1).col;
    }
  | IDENT '[' exprs ']'         { $$ = access(ctx, $1, $3, @$); }
  | IDENT '[' exprs ']' ELSE uexpr {
        $$ = access(ctx, $1, $3, @$);
        $$->dflt = $6;
        $$->span.end = SP(@4).end;   /* the read itself, for messages */
        nest(ctx, $$);
    }
  | IDENT '(' args ')' {
        $$ = fe_expr_new(A, FE_E_CALL, SP(@$));
        $$->name = $1;
        $$->args = ir_alloc(A, sizeof(fe_arg) * (size_t)($3->n ? $3->n : 1));
        for (int i = 0; i < $3->n; i++)
            $$->args[i] = *(fe_arg *)$3->v[i];
        $$->nargs = $3->n;
        nest(ctx, $$);
    }
  | DTYPE '(' expr ')' {
        $$ = fe_expr_new(A, FE_E_CAST, SP(@$));
        $$->dtype = $1;
        $$->a = $3;
        nest(ctx, $$);
    }
  ;

args:
    %empty                      { $$ = fe_vec_new(A); }
  | args1                       { $$ = $1; }
  ;

args1:
    arg                         { $$ = fe_vec_new(A); fe_vec_push(A, $$, $1); }
  | args1 ',' arg               { $$ = $1; fe_vec_push(A, $$, $3); }
  ;

arg:
    expr {
        $$ = ir_alloc(A, sizeof *$$);
        $$->span = $1->span;
        $$->value = $1;
    }
  | IDENT '=' expr {
        $$ = ir_alloc(A, sizeof *$$);
        $$->name = $1;
        $$->span = fe_span_join(SP(@1), $3->span);
        $$->value = $3;
    }
  ;

%%

fe_span fe_span_of(const fe_parser *p, fe_yyloc l)
{
    fe_span s = {p->file, l.first_line, l.first_column, l.first_off, l.last_off};
    return s;
}
