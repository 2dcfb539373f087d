/* skillc: Material for MkDocs' inline helpers (partials/javascripts/base.html), as a file so the
 * site's Content-Security-Policy can forbid inline scripts.  Same code; the scope comes from the
 * script tag's data-scope attribute instead of being written into an inline script. */
__md_scope=new URL(document.currentScript.getAttribute("data-scope")||".",location),__md_hash=e=>[...e].reduce(((e,_)=>(e<<5)-e+_.charCodeAt(0)),0),__md_get=(e,_=localStorage,t=__md_scope)=>JSON.parse(_.getItem(t.pathname+"."+e)),__md_set=(e,_,t=localStorage,a=__md_scope)=>{try{t.setItem(a.pathname+"."+e,JSON.stringify(_))}catch(e){}};
